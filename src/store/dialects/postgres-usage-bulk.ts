// The statements of a usage batch on PostgreSQL: each table's rows in one statement, passed
// as one array per column and expanded with unnest. A batch of any size is then a handful
// of short statements with a fixed number of parameters, cheap to parse and plan, instead
// of a multi-row VALUES per few hundred rows and an UPDATE per account (which made a batch
// spread over many accounts cost a round trip each).
import { sql, type Insertable } from 'kysely';
import type { CappedCharge, UsageRecord } from '../store.js';
import type { Db } from '../sql.js';
import { COARSE_ROLLUP_COLUMNS, COARSE_ROLLUP_KEYS, conflictClause, USAGE_DAILY_COLUMNS, USAGE_DAILY_SUMS, type CoarseRollupTable } from '../usage-rollup.js';
import { toUsageRow } from '../usage-rows.js';
import type { LedgerEntriesTable, UsageDailyTable } from '../tables.js';

type Columns = Readonly<Record<string, string>>;

/** Each column's PostgreSQL type, in insert order. */
const USAGE_TYPES: Columns = {
  id: 'varchar', request_id: 'varchar', account_id: 'varchar', key_id: 'varchar', member_id: 'varchar', model: 'varchar',
  prompt_tokens: 'int4', completion_tokens: 'int4', cached_tokens: 'int4', cache_write_tokens: 'int4', cache_write_1h_tokens: 'int4',
  reasoning_tokens: 'int4', basis: 'varchar', outcome: 'varchar', cost_micros: 'int8', shortfall_micros: 'int8', held_micros: 'int8',
  latency_ms: 'int4', status: 'int4', streamed: 'int4', finish_reason: 'varchar', created_at: 'timestamptz',
};
const LEDGER_TYPES: Columns = { account_id: 'varchar', kind: 'varchar', amount_micros: 'int8', reason: 'varchar', reference: 'varchar', created_at: 'timestamptz' };
/** A rollup column's type: its days and months are dates, its ids and models text, its sums bigint. */
const rollupTypes = (columns: readonly string[]): Columns =>
  Object.fromEntries(columns.map((column) => [column, /^(day|month)$/.test(column) ? 'date' : column === 'status' ? 'int4' : /_id$|model/.test(column) ? 'varchar' : 'int8']));
const DAILY_TYPES = rollupTypes(USAGE_DAILY_COLUMNS);

/**
 * The rows as one typed array parameter per column. An integer column goes as its array's
 * text, joined here: pg would quote and escape each element (a few ms a batch).
 */
function arrays(types: Columns, rows: readonly object[]) {
  return Object.entries(types).map(([column, type]) => {
    const values = rows.map((row) => (row as Record<string, unknown>)[column] ?? null);
    return sql`${type.startsWith('int') ? `{${values.map((value) => value ?? 'NULL').join(',')}}` : values}::${sql.raw(type)}[]`;
  });
}

/** `(columns) select * from unnest($1::type[], ...)`: the rows as one array per column. */
function unnested(types: Columns, rows: readonly object[]) {
  return sql`(${sql.join(Object.keys(types).map((column) => sql.ref(column)))}) select * from unnest(${sql.join(arrays(types, rows))})`;
}

/** Inserts the records; answers with the ids actually inserted (a record stored before is skipped). */
export async function insertUsage(trx: Db, records: readonly UsageRecord[]): Promise<Set<string>> {
  const { rows } = await sql<{ id: string }>`insert into usage_records ${unnested(USAGE_TYPES, records.map(toUsageRow))}
    on conflict (created_at, id) do nothing returning id`.execute(trx);
  return new Set(rows.map((row) => row.id));
}

export async function insertLedger(trx: Db, entries: readonly Insertable<LedgerEntriesTable>[]): Promise<void> {
  if (entries.length > 0) await sql`insert into ledger_entries ${unnested(LEDGER_TYPES, entries)}`.execute(trx);
}

export async function debitBalances(trx: Db, chargedByAccount: ReadonlyMap<string, number>): Promise<void> {
  if (chargedByAccount.size === 0) return;
  await sql`update accounts set balance_micros = accounts.balance_micros - v.charged, balance_version = accounts.balance_version + 1
    from unnest(${[...chargedByAccount.keys()]}::varchar[], ${[...chargedByAccount.values()]}::int8[]) as v (id, charged)
    where accounts.id = v.id`.execute(trx);
}

/** Stores the final shortfall of capped records, found by their whole key (created_at picks the partition). */
export async function setShortfalls(trx: Db, capped: readonly CappedCharge[], stored: readonly UsageRecord[]): Promise<void> {
  if (capped.length === 0) return;
  const createdAt = new Map(stored.map((r) => [r.id, r.createdAt]));
  await sql`update usage_records set shortfall_micros = v.shortfall
    from unnest(${capped.map((cut) => createdAt.get(cut.usageId)!)}::timestamptz[], ${capped.map((cut) => cut.usageId)}::varchar[],
      ${capped.map((cut) => cut.costMicros - cut.chargedMicros)}::int8[]) as v (created_at, id, shortfall)
    where usage_records.created_at = v.created_at and usage_records.id = v.id`.execute(trx);
}

/** A coarse rollup's rows summed from the batch's usage_daily rows (`input`), in key order. */
function coarseUpsert(table: CoarseRollupTable) {
  const key: readonly string[] = COARSE_ROLLUP_KEYS[table];
  const columns = COARSE_ROLLUP_COLUMNS[table].filter((column) => !(USAGE_DAILY_SUMS as readonly string[]).includes(column));
  // A key's account rides along: one per key for its whole life, so any of the group's.
  const select = columns.map((column) => (column === 'month' ? `date_trunc('month', day)::date` : key.includes(column) ? column : `max(${column})`));
  const grouped = key.map((column) => select[columns.indexOf(column)]).join(', ');
  return sql.raw(`insert into ${table} (${columns.join(', ')}, ${USAGE_DAILY_SUMS.join(', ')})
    select ${select.join(', ')}, ${USAGE_DAILY_SUMS.map((column) => `sum(${column})::int8`).join(', ')}
    from input group by ${grouped} order by ${grouped} ${conflictClause(table)}`);
}
const COARSE_UPSERTS = (Object.keys(COARSE_ROLLUP_KEYS) as CoarseRollupTable[]).map((table) => sql`${sql.id(`add_${table}`)} as (${coarseUpsert(table)})`);

/**
 * Adds a batch's usage_daily rows (in key order), and their sums to the rollups across
 * accounts, in one statement: data-modifying CTEs over the rows sent once, each table's
 * upsert in key order, so concurrent batches lock shared rows in the same order.
 */
export async function upsertUsageRollups(trx: Db, rows: readonly UsageDailyTable[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`with input as (select * from unnest(${sql.join(arrays(DAILY_TYPES, rows))}) as t (${sql.raw(USAGE_DAILY_COLUMNS.join(', '))})),
    ${sql.join(COARSE_UPSERTS)}
    insert into usage_daily (${sql.raw(USAGE_DAILY_COLUMNS.join(', '))}) select * from input ${sql.raw(conflictClause('usage_daily'))}`.execute(trx);
}
