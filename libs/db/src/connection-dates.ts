import type { Knex } from 'knex';

/**
 * A connection's creation and last status change (its status_changed_at, else its creation): the SQS
 * door's CreatedTimestamp and LastModifiedTimestamp of a consumer's queue. Null for no such connection.
 */
export async function readConnectionDates(db: Knex, connectionId: string): Promise<{ createdAt: Date; modifiedAt: Date } | null> {
  const row = await db('connections')
    .where({ id: connectionId })
    .first<{ created_at: Date; status_changed_at: Date | null } | undefined>('created_at', 'status_changed_at');
  return row ? { createdAt: row.created_at, modifiedAt: row.status_changed_at ?? row.created_at } : null;
}
