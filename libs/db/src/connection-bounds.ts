import type { Knex } from 'knex';

/** What a connection holds that is bounded per connection (docs/admin.md), by the column naming it. */
export type ConnectionHoldings =
  { table: 'skill_registrations'; column: 'consumer_id' } | { table: 'aws_principals' | 'identity_bindings'; column: 'connection_id' };

/**
 * Locks the connection's row for the rest of the transaction and counts its rows of `holdings`: a
 * bound checked on this count cannot be passed by two requests at once, since the second waits for
 * the first to commit and then counts its row too. Undefined when there is no such connection.
 */
export async function countHeldUnderLock(
  trx: Knex.Transaction,
  connectionId: string,
  holdings: ConnectionHoldings,
): Promise<{ status: string; held: number } | undefined> {
  const connection = (await trx('connections').where({ id: connectionId }).forUpdate().first('status')) as { status: string } | undefined;
  if (connection === undefined) return undefined;
  const [counted] = (await trx(holdings.table).where(holdings.column, connectionId).count({ n: '*' })) as { n: string | number }[];
  return { status: connection.status, held: Number(counted?.n ?? 0) };
}
