// Usage records: one per request that reached a model, written in batches with their
// ledger charges (the dialect does the write), read back for the dashboard.
import { sql, type Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import type { Dialect } from './dialect.js';
import { checkLimit, now, type Db } from './sql.js';
import type { CappedCharge, TimeRange, UsageRecord, UsageSummary, UsageTotals } from './store.js';
import type { UsageOutcome } from './usage-basis.js';
import type { SpendScope } from './org-store.js';
import type { UsageRecordsTable } from './tables.js';

export async function recordUsage(db: Db, dialect: Dialect, records: readonly UsageRecord[], inTransaction: boolean): Promise<CappedCharge[]> {
  // A batch may repeat a record (a retried enqueue); the first copy wins, like the id
  // conflict with a stored one.
  const byId = new Map<string, UsageRecord>();
  for (const record of records) {
    checkUsageRecord(record);
    if (!byId.has(record.id)) byId.set(record.id, record);
  }
  if (byId.size === 0) return [];
  return dialect.recordUsage(db, [...byId.values()], now(), inTransaction);
}

export async function listUsage(db: Db, accountId: string, options: { limit?: number; sinceIso?: string; untilIso?: string; memberId?: string } = {}): Promise<UsageRecord[]> {
  let query = db.selectFrom('usage_records').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (options.memberId !== undefined) query = query.where('member_id', '=', options.memberId);
  if (options.sinceIso !== undefined) query = query.where('created_at', '>=', options.sinceIso);
  if (options.untilIso !== undefined) query = query.where('created_at', '<', options.untilIso);
  if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
  return (await query.execute()).map(toUsageRecord);
}

/** Listed unstored records looked for at most: far more than one key settles while the store is reachable. */
const MAX_UNSTORED = 10_000;

/**
 * One statement, so one snapshot: the stored records' costs, plus those of `unstored` the
 * store does not have. A record listed and committed meanwhile counts once either way.
 */
export async function spendOf(db: Db, scope: SpendScope, sinceIso: string | null, unstored: readonly Pick<UsageRecord, 'id' | 'costMicros' | 'shortfallMicros'>[]): Promise<number> {
  // A scope spends what its requests were charged: their cost less what the account could not pay.
  const listed = new Map(unstored.slice(0, MAX_UNSTORED).map((record) => [record.id, record.costMicros - record.shortfallMicros]));
  const ids = [...listed.keys()];
  let query = db
    .selectFrom('usage_records')
    .select((eb) => [
      sql<number | string>`coalesce(sum(cost_micros - shortfall_micros), 0)`.as('spent'),
      (ids.length === 0 ? sql<number>`0` : sql<number | string>`coalesce(sum(case when id in (${sql.join(ids)}) then cost_micros - shortfall_micros else 0 end), 0)`).as('stored_of_listed'),
    ])
    .$call((q) => ('keyId' in scope ? q.where('key_id', '=', scope.keyId) : q.where('account_id', '=', scope.accountId)))
    .$call((q) => ('memberId' in scope && scope.memberId !== undefined ? q.where('member_id', '=', scope.memberId) : q));
  if (sinceIso !== null) query = query.where('created_at', '>=', sinceIso);
  const row = await query.executeTakeFirstOrThrow();
  let unstoredMicros = 0;
  for (const cost of listed.values()) unstoredMicros += cost;
  // PostgreSQL's sum of a bigint is a numeric, which arrives as text.
  return checkMicros(Number(row.spent) + unstoredMicros - Number(row.stored_of_listed));
}

/**
 * An account's usage per UTC day, and per day and model or key, from the daily rollups:
 * a read of one account's days in the primary key (account_id, day, ...), however many
 * requests they hold, and still whole for days whose raw records are past the retention.
 */
export async function summarizeUsage(db: Db, accountId: string, range: TimeRange, options: { memberId?: string } = {}): Promise<UsageSummary> {
  const { fromDay, untilDay } = rollupDays(range);
  const base = db
    .selectFrom('usage_daily')
    .where('account_id', '=', accountId)
    .where('day', '>=', fromDay)
    .where('day', '<', untilDay)
    // A key has one member for its whole life, so a rollup row is all one member's.
    .$call((q) => (options.memberId === undefined ? q : q.where('member_id', '=', options.memberId)))
    .select((eb) => [
      'day',
      eb.fn.sum<number | string>('requests').as('requests'),
      eb.fn.sum<number | string>('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum<number | string>('completion_tokens').as('completion_tokens'),
      eb.fn.sum<number | string>('cost_micros').as('cost_micros'),
    ]);
  const [days, byModel, byKey] = await Promise.all([
    base.groupBy('day').orderBy('day').execute(),
    base.select('model').groupBy(['day', 'model']).orderBy('day').orderBy('model').execute(),
    base.select('key_id').groupBy(['day', 'key_id']).orderBy('day').orderBy('key_id').execute(),
  ]);
  return {
    days: days.map(toUsageTotals),
    byModel: byModel.map((row) => ({ ...toUsageTotals(row), model: row.model })),
    byKey: byKey.map((row) => ({ ...toUsageTotals(row), keyId: row.key_id })),
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The UTC days (`YYYY-MM-DD`; `fromDay` inclusive, `untilDay` exclusive) with which the
 * rollups answer a time range: every day [fromIso, untilIso) touches. The dashboard and
 * the console ask for whole days, midnight to midnight, where this is exact; a range that
 * starts or ends within a day gets that whole day, since a day's rollup cannot be cut.
 */
export function rollupDays(range: TimeRange): { fromDay: string; untilDay: string } {
  const fromMs = Date.parse(range.fromIso);
  const untilMs = Date.parse(range.untilIso);
  const fromDay = new Date(fromMs).toISOString().slice(0, 10);
  // An empty range stays empty rather than growing into its day.
  if (!(untilMs > fromMs)) return { fromDay, untilDay: fromDay };
  return { fromDay, untilDay: new Date(Math.ceil(untilMs / DAY_MS) * DAY_MS).toISOString().slice(0, 10) };
}

function checkUsageRecord(record: UsageRecord): void {
  if (checkMicros(record.costMicros) < 0) throw new RangeError(`usage ${record.id} has a negative cost`);
  for (const [name, value] of [
    ['promptTokens', record.promptTokens],
    ['completionTokens', record.completionTokens],
    ['latencyMs', record.latencyMs],
    ['status', record.status],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`usage ${record.id}: ${name} is not a count: ${value}`);
  }
}

export function toUsageRecord(row: Selectable<UsageRecordsTable>): UsageRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    memberId: row.member_id ?? null,
    model: row.model,
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens),
    cacheWrite1hTokens: Number(row.cache_write_1h_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    basis: row.basis === 'counted' ? 'counted' : 'reported',
    outcome: row.outcome as UsageOutcome,
    costMicros: checkMicros(Number(row.cost_micros)),
    shortfallMicros: checkMicros(Number(row.shortfall_micros)),
    heldMicros: checkMicros(Number(row.held_micros)),
    latencyMs: Number(row.latency_ms),
    status: Number(row.status),
    streamed: Number(row.streamed) === 1,
    finishReason: row.finish_reason,
    createdAt: row.created_at,
  };
}

function toUsageTotals(row: {
  day: string;
  requests: number | string;
  prompt_tokens: number | string | null;
  completion_tokens: number | string | null;
  cost_micros: number | string | null;
}): UsageTotals & { date: string } {
  // PostgreSQL sums into NUMERIC (a string from pg); counts are BIGINT.
  return {
    date: row.day,
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens ?? 0),
    completionTokens: Number(row.completion_tokens ?? 0),
    costMicros: checkMicros(Number(row.cost_micros ?? 0)),
  };
}
