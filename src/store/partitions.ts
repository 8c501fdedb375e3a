// PostgreSQL keeps usage_records and refused_requests in one partition per UTC month
// (migration 0020), so a month past the retention goes with one DROP TABLE instead of
// millions of deletes, and a range read touches only its months. A month's partition must
// exist before a row of it is written: the server makes them ahead of time, and a write
// makes any it still lacks (an old record retried, a clock far off) before its transaction.
import { sql } from 'kysely';
import type { Db } from './sql.js';

export const PARTITIONED_TABLES = ['usage_records', 'refused_requests'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Months made ahead of the current one, so no write at a month's turn waits for DDL. */
export const MONTHS_AHEAD = 2;

/** `YYYY-MM`, UTC, of an ISO 8601 time. */
export function monthOf(iso: string): string {
  return new Date(iso).toISOString().slice(0, 7);
}

/** The first instant of the month after `month`, as ISO 8601. */
export function monthEnd(month: string): string {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, mon, 1)).toISOString();
}

/** Every month that [fromIso, untilIso) touches, oldest first. */
export function monthsBetween(fromIso: string, untilIso: string): string[] {
  const months: string[] = [];
  const last = monthOf(new Date(new Date(untilIso).getTime() - 1).toISOString());
  for (let month = monthOf(fromIso); month <= last; month = monthOf(monthEnd(month))) months.push(month);
  return months;
}

/** Every month from `firstIso`'s to `lastIso`'s, both included (the span of rows there are). */
export function monthsCovering(firstIso: string, lastIso: string): string[] {
  return monthsBetween(firstIso, new Date(new Date(lastIso).getTime() + 1).toISOString());
}

/** The months from `nowIso`'s to MONTHS_AHEAD after it. */
export function monthsAhead(nowIso: string): string[] {
  const months = [monthOf(nowIso)];
  while (months.length <= MONTHS_AHEAD) months.push(monthOf(monthEnd(months.at(-1)!)));
  return months;
}

export function partitionName(table: PartitionedTable, month: string): string {
  return `${table}_p${month.replace('-', '_')}`;
}

/** A partition's month, from its name; undefined for a table that is not one of ours. */
export function monthOfPartition(table: PartitionedTable, name: string): string | undefined {
  const match = new RegExp(`^${table}_p(\\d{4})_(\\d{2})$`).exec(name);
  return match ? `${match[1]}-${match[2]}` : undefined;
}

// SQLSTATEs of a CREATE TABLE IF NOT EXISTS that raced another session making the same table.
const RACED = new Set(['42P07', '23505']);

/**
 * Makes `table`'s partition for `month` unless it exists. Runs on its own (outside any
 * transaction of the caller): creating a partition locks the parent table, so it must not
 * wait behind a transaction that is itself waiting for this one.
 */
export async function createMonthPartition(db: Db, table: PartitionedTable, month: string): Promise<void> {
  try {
    await db.transaction().execute(async (trx) => {
      // Bounded: a long-running reader of the parent fails this attempt, not the server.
      await sql`set local lock_timeout = '5s'`.execute(trx);
      await monthPartitionDdl(table, month).execute(trx);
    });
  } catch (err) {
    if (!RACED.has((err as { code?: string }).code ?? '')) throw err;
  }
}

/** The statement that makes `table`'s partition for `month` unless it exists. */
export function monthPartitionDdl(table: PartitionedTable, month: string) {
  const from = `${month}-01T00:00:00.000Z`;
  return sql`create table if not exists ${sql.id(partitionName(table, month))} partition of ${sql.id(table)} for values from (${sql.lit(from)}) to (${sql.lit(monthEnd(month))})`;
}

/** The partitions `table` has, by month, oldest first. */
export async function listMonthPartitions(db: Db, table: PartitionedTable): Promise<{ month: string; name: string }[]> {
  const { rows } = await sql<{ name: string }>`
    select child.relname as name from pg_inherits
    join pg_class parent on parent.oid = pg_inherits.inhparent
    join pg_class child on child.oid = pg_inherits.inhrelid
    where parent.relname = ${table} and parent.relnamespace = to_regnamespace(current_schema())`.execute(db);
  return rows
    .map((row) => ({ name: row.name, month: monthOfPartition(table, row.name) }))
    .filter((row): row is { name: string; month: string } => row.month !== undefined)
    .sort((a, b) => (a.month < b.month ? -1 : 1));
}

/** Remembers the months made, so a write asks PostgreSQL only for a month it has not seen. */
export class MonthPartitions {
  private readonly made = new Set<string>();

  constructor(private readonly root: Db) {}

  async ensure(table: PartitionedTable, months: Iterable<string>): Promise<void> {
    for (const month of months) {
      const key = `${table} ${month}`;
      if (this.made.has(key)) continue;
      await createMonthPartition(this.root, table, month);
      this.made.add(key);
    }
  }

  /** After a partition was dropped: the next write of that month makes it again. */
  forget(table: PartitionedTable, month: string): void {
    this.made.delete(`${table} ${month}`);
  }
}
