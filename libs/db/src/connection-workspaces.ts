import type { Knex } from 'knex';

/**
 * The workspace of each connection id given (ids that name no connection are left out): the
 * `workspace` label of the per-consumer queue gauges. A connection never changes workspace, so a
 * caller may keep the answer for the process's life.
 */
export async function readConnectionWorkspaces(db: Knex, connectionIds: readonly string[]): Promise<Map<string, string>> {
  if (connectionIds.length === 0) return new Map();
  const rows: Array<{ id: string; workspace_id: string }> = await db('connections')
    .whereIn('id', [...connectionIds])
    .select('id', 'workspace_id');
  return new Map(rows.map((r) => [r.id, r.workspace_id]));
}
