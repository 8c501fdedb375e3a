// The daily rollups (usage_daily, refusal_daily: migration 0020) a batch adds, summed in
// memory per group and upserted in the batch's transaction: each stored record is counted
// exactly once, with the shortfall it was finally stored with.
import { sql } from 'kysely';
import type { RefusedRequest } from './request-log-store.js';
import { chunked, type Db } from './sql.js';
import type { CappedCharge, UsageRecord } from './store.js';
import type { RefusalDailyTable, UsageDailyTable } from './tables.js';
import type { UsageSumColumns } from './usage-rollup-tables.js';

export const USAGE_DAILY_KEY = ['account_id', 'day', 'key_id', 'model', 'status'] as const;
/** Every sum of a usage rollup row, zero: the one list of them (its type makes it whole). */
const NO_USAGE: Readonly<UsageSumColumns> = {
  requests: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cache_write_tokens: 0,
  cache_write_1h_tokens: 0,
  reasoning_tokens: 0,
  counted_requests: 0,
  cost_micros: 0,
  shortfall_micros: 0,
};
export const USAGE_DAILY_SUMS = Object.keys(NO_USAGE) as readonly (keyof UsageSumColumns)[];

/** A row's sums as numbers (PostgreSQL sums bigint into NUMERIC, a string from pg); one it lacks is 0. */
export function sumsOf(row: { readonly [field in keyof UsageSumColumns]?: unknown }): UsageSumColumns {
  const sums = { ...NO_USAGE };
  for (const field of USAGE_DAILY_SUMS) sums[field] = Number(row[field] ?? 0);
  return sums;
}

export const USAGE_DAILY_COLUMNS = [...USAGE_DAILY_KEY, 'member_id', ...USAGE_DAILY_SUMS] as const;

export const REFUSAL_DAILY_KEY = ['account_id', 'day', 'key_id', 'status'] as const;
export const REFUSAL_DAILY_COLUMNS = [...REFUSAL_DAILY_KEY, 'member_id', 'requests'] as const;

/** The rollups across accounts (migration 0021): each usage_daily's sums under a coarser key. */
export const COARSE_ROLLUP_KEYS = {
  usage_models_daily: ['day', 'model', 'status'],
  usage_accounts_monthly: ['account_id', 'month'],
  usage_keys_monthly: ['key_id', 'month'],
} as const;
export type CoarseRollupTable = keyof typeof COARSE_ROLLUP_KEYS;
export const COARSE_ROLLUP_COLUMNS: Record<CoarseRollupTable, readonly string[]> = {
  usage_models_daily: [...COARSE_ROLLUP_KEYS.usage_models_daily, ...USAGE_DAILY_SUMS],
  usage_accounts_monthly: [...COARSE_ROLLUP_KEYS.usage_accounts_monthly, ...USAGE_DAILY_SUMS],
  // A key's account rides along: never part of the key, a key has one for its whole life.
  usage_keys_monthly: [...COARSE_ROLLUP_KEYS.usage_keys_monthly, 'account_id', ...USAGE_DAILY_SUMS],
};

type RollupTable = 'usage_daily' | 'refusal_daily' | CoarseRollupTable;

function shapeOf(table: RollupTable): { columns: readonly string[]; key: readonly string[]; sums: readonly string[] } {
  if (table === 'usage_daily') return { columns: USAGE_DAILY_COLUMNS, key: USAGE_DAILY_KEY, sums: USAGE_DAILY_SUMS };
  if (table === 'refusal_daily') return { columns: REFUSAL_DAILY_COLUMNS, key: REFUSAL_DAILY_KEY, sums: ['requests'] };
  return { columns: COARSE_ROLLUP_COLUMNS[table], key: COARSE_ROLLUP_KEYS[table], sums: USAGE_DAILY_SUMS };
}

export function conflictClause(table: RollupTable): string {
  const { key, sums } = shapeOf(table);
  return `ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${sums.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`;
}

/** One row's `INSERT ... ON CONFLICT DO UPDATE`, adding its sums to its group's, with positional parameters (SQLite's prepared statements). */
export function upsertSql(table: RollupTable): string {
  const { columns } = shapeOf(table);
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) ${conflictClause(table)}`;
}

// Far below PostgreSQL's 65535 bound parameters: 16 columns × 500 rows.
const ROLLUP_ROWS_PER_UPSERT = 500;

/** The same upsert through Kysely, many rows per statement. */
export async function upsertRollups(db: Db, table: RollupTable, rows: readonly (UsageDailyTable | RefusalDailyTable)[]): Promise<void> {
  const { columns } = shapeOf(table);
  for (const chunk of chunked(rows, ROLLUP_ROWS_PER_UPSERT)) {
    const tuples = chunk.map((row) => sql`(${sql.join(valuesOf(row, columns))})`);
    await sql`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) values ${sql.join(tuples)} ${sql.raw(conflictClause(table))}`.execute(db);
  }
}

/** The UTC day of an ISO 8601 time, as rollups key it. */
export function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

/**
 * The rollup rows of `stored` (records this batch inserted), one per group, in key order
 * (so concurrent batches upsert shared groups in the same order). `shortfalls` holds the
 * final shortfall of records the batch capped.
 */
export function usageRollups(stored: readonly UsageRecord[], shortfalls: ReadonlyMap<string, number>): UsageDailyTable[] {
  const groups = new Map<string, UsageDailyTable>();
  for (const r of stored) {
    const day = dayOf(r.createdAt);
    const key = `${r.accountId}\u0000${day}\u0000${r.keyId}\u0000${r.model}\u0000${r.status}`;
    let row = groups.get(key);
    if (!row) {
      row = {
        account_id: r.accountId, day, key_id: r.keyId, model: r.model, status: r.status, member_id: r.memberId,
        requests: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cache_write_tokens: 0,
        cache_write_1h_tokens: 0, reasoning_tokens: 0, counted_requests: 0, cost_micros: 0, shortfall_micros: 0,
      };
      groups.set(key, row);
    }
    row.requests += 1;
    row.prompt_tokens += r.promptTokens;
    row.completion_tokens += r.completionTokens;
    row.cached_tokens += r.cachedTokens;
    row.cache_write_tokens += r.cacheWriteTokens;
    row.cache_write_1h_tokens += r.cacheWrite1hTokens;
    row.reasoning_tokens += r.reasoningTokens;
    row.counted_requests += r.basis === 'counted' ? 1 : 0;
    row.cost_micros += r.costMicros;
    row.shortfall_micros += shortfalls.get(r.id) ?? r.shortfallMicros;
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** The first day of a day's UTC month, as the monthly rollups key it. */
export function monthOf(day: string): string {
  return `${day.slice(0, 7)}-01`;
}

/** The first day of the UTC month after `month`'s. */
export function nextMonth(month: string): string {
  const at = new Date(`${month.slice(0, 7)}-01T00:00:00.000Z`);
  at.setUTCMonth(at.getUTCMonth() + 1);
  return at.toISOString().slice(0, 10);
}

/**
 * The rows a batch adds to each rollup across accounts, summed from its usage_daily rows
 * (SQLite's; PostgreSQL sums them in the statement that upserts them).
 */
export function coarseRollups(daily: readonly UsageDailyTable[]): Record<CoarseRollupTable, UsageSumColumns[]> {
  const models = new Map<string, UsageSumColumns>();
  const accounts = new Map<string, UsageSumColumns>();
  const keys = new Map<string, UsageSumColumns>();
  for (const row of daily) {
    const month = monthOf(row.day);
    addTo(models, `${row.day}\u0000${row.model}\u0000${row.status}`, row, () => ({ day: row.day, model: row.model, status: row.status }));
    addTo(accounts, `${row.account_id}\u0000${month}`, row, () => ({ account_id: row.account_id, month }));
    addTo(keys, `${row.key_id}\u0000${month}`, row, () => ({ key_id: row.key_id, month, account_id: row.account_id }));
  }
  return { usage_models_daily: [...models.values()], usage_accounts_monthly: [...accounts.values()], usage_keys_monthly: [...keys.values()] };
}

/** Adds `row`'s sums to the group `id`, made with the columns `key` gives when new. */
function addTo(groups: Map<string, UsageSumColumns>, id: string, row: UsageSumColumns, key: () => object): void {
  const group = groups.get(id);
  if (group === undefined) groups.set(id, { ...key(), ...sumsOf(row) });
  else for (const column of USAGE_DAILY_SUMS) group[column] += row[column];
}

export function refusalRollups(refusals: readonly RefusedRequest[]): RefusalDailyTable[] {
  const groups = new Map<string, RefusalDailyTable>();
  for (const r of refusals) {
    const day = dayOf(r.createdAt);
    const key = `${r.accountId}\u0000${day}\u0000${r.keyId}\u0000${r.status}`;
    const row = groups.get(key) ?? { account_id: r.accountId, day, key_id: r.keyId, status: r.status, member_id: r.memberId, requests: 0 };
    row.requests += 1;
    groups.set(key, row);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** A row's values in `columns`' order, for positional binding. */
export function valuesOf(row: object, columns: readonly string[]): unknown[] {
  return columns.map((column) => (row as Record<string, unknown>)[column]);
}

/** The final shortfall of each record a batch capped: what it cost less what was charged. */
export function shortfallsOf(capped: readonly CappedCharge[]): Map<string, number> {
  return new Map(capped.map((cut) => [cut.usageId, cut.costMicros - cut.chargedMicros]));
}
