import type { Knex } from 'knex';
import type { TableName } from './tables';

/**
 * Part of a list in its order (creation, then id): at most `limit`, only those after the item whose id
 * `after` is (the previous page's last).
 */
export interface ListPage {
  limit: number;
  after?: string;
}

/**
 * Narrows a query ordered by (created_at, id) to one page. The row `page.after` names is read from the
 * table itself, so the keyset keeps the timestamp's microseconds (a JSON timestamp has milliseconds,
 * and rows made in one millisecond would repeat or vanish at a page boundary); none when no row has
 * that id.
 */
export function keysetPage<Q extends Knex.QueryBuilder>(query: Q, source: { table: TableName; alias?: string }, page: ListPage | undefined): Q {
  if (page === undefined) return query;
  const alias = source.alias ?? source.table;
  if (page.after !== undefined) {
    void query.whereRaw(`(??, ??) > (SELECT created_at, id FROM ?? WHERE id = ?)`, [`${alias}.created_at`, `${alias}.id`, source.table, page.after]);
  }
  void query.limit(page.limit);
  return query;
}

/**
 * The page of rows read with one more than `limit` (that one says whether another page follows): at
 * most `limit` items, and the last one's id to pass as `after` when more follow, else null.
 */
export function pageOfRows<T>(rows: readonly T[], limit: number, idOf: (row: T) => string): { items: T[]; nextAfter: string | null } {
  const items = rows.slice(0, limit);
  return { items, nextAfter: rows.length > limit ? idOf(items[items.length - 1]!) : null };
}
