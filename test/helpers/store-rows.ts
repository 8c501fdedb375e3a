// Every row of every table a store holds, for comparing two stores (or one store before
// and after a change) column for column.
import type { Db } from '../../src/store/sql.js';
import { STORE_TABLES } from '../../src/store/tables.js';

/** Every row of every table, in an order that does not depend on either database's collation. */
export async function allRows(db: Db): Promise<Record<string, Record<string, unknown>[]>> {
  const tables: Record<string, Record<string, unknown>[]> = {};
  for (const table of STORE_TABLES) {
    const rows = (await db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
    const sortKey = (row: Record<string, unknown>): string => JSON.stringify(Object.entries(row).sort(([a], [b]) => a.localeCompare(b)));
    tables[table] = rows.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
  }
  return tables;
}
