import type { Knex } from 'knex';
import type { Row } from './tables';

/** A row that holds a bounded number of others (docs/admin.md), and the column naming it in those. */
export type Holdings =
  | { holder: 'connections'; table: 'skill_registrations'; column: 'consumer_id' }
  | { holder: 'connections'; table: 'aws_principals' | 'identity_bindings'; column: 'connection_id' }
  | { holder: 'organisations'; table: 'workspaces'; column: 'organisation_id' }
  | { holder: 'workspaces'; table: 'apps' | 'connections'; column: 'workspace_id' };

/**
 * Locks the holder's row for the rest of the transaction and counts the rows it holds (but those
 * matching `uncounted`, e.g. removed connections): a bound checked
 * on this count cannot be passed by two requests at once, since the second waits for the first to
 * commit and then counts its row too. The lock is FOR NO KEY UPDATE, so it serialises only these
 * writers: inserts that merely reference the row (their foreign key checks) go on. Undefined when
 * there is no such holder.
 */
export async function countHeldUnderLock<H extends Holdings>(
  trx: Knex.Transaction,
  holderId: string,
  holdings: H,
  uncounted: Record<string, string> = {},
): Promise<{ holder: Row<H['holder']>; held: number } | undefined> {
  const holder = (await trx(holdings.holder).where({ id: holderId }).forNoKeyUpdate().first()) as Row<H['holder']> | undefined;
  if (holder === undefined) return undefined;
  const [counted] = (await trx(holdings.table).where(holdings.column, holderId).whereNot(uncounted).count({ n: '*' })) as { n: string | number }[];
  return { holder, held: Number(counted?.n ?? 0) };
}
