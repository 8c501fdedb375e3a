// Raw rows past their retention removed (usage.retention_days for usage records,
// request_log.retention_days for refusals). On PostgreSQL a month wholly past it goes with
// its partition, in one statement; what is left before the cut, and everything on SQLite,
// goes a bounded batch per statement, so no sweep holds one long transaction. The daily
// rollups and the ledger are never touched: charts and balances outlive the raw rows.
import { sql } from 'kysely';
import type { Dialect } from './dialect.js';
import { listMonthPartitions, monthEnd, type PartitionedTable } from './partitions.js';
import type { Db } from './sql.js';
import type { UsagePruned } from './usage-data-store.js';

const ROWS_PER_DELETE = 5000;

export function pruneUsage(db: Db, dialect: Dialect, beforeIso: string): Promise<UsagePruned> {
  return pruneRows(db, dialect, 'usage_records', beforeIso);
}

export async function pruneRows(db: Db, dialect: Dialect, table: PartitionedTable, beforeIso: string): Promise<UsagePruned> {
  const partitionsDropped: string[] = [];
  if (dialect.name === 'postgres') {
    for (const partition of await listMonthPartitions(db, table)) {
      if (monthEnd(partition.month) > beforeIso) break;
      await db.transaction().execute(async (trx) => {
        // Dropping locks the parent: bounded, so a long reader fails this sweep, not the server.
        await sql`set local lock_timeout = '5s'`.execute(trx);
        await sql`drop table if exists ${sql.id(partition.name)}`.execute(trx);
      });
      dialect.forgetPartition(table, partition.month);
      partitionsDropped.push(partition.name);
    }
  }
  let rowsDeleted = 0;
  for (;;) {
    const batch =
      dialect.name === 'postgres'
        ? sql`delete from ${sql.table(table)} where (created_at, id) in (select created_at, id from ${sql.table(table)} where created_at < ${beforeIso} limit ${ROWS_PER_DELETE})`
        : sql`delete from ${sql.table(table)} where rowid in (select rowid from ${sql.table(table)} where created_at < ${beforeIso} limit ${ROWS_PER_DELETE})`;
    const deleted = Number((await batch.execute(db)).numAffectedRows ?? 0);
    rowsDeleted += deleted;
    if (deleted < ROWS_PER_DELETE) return { partitionsDropped, rowsDeleted };
  }
}
