// Usage read across accounts for the operator: sums over a period by UTC day, model,
// account, key and status, read from the rollups (usage_models_daily, the monthly ones
// through usage-top.ts, usage_daily for one account, refusal_daily; never the raw rows, so
// the cost of a read follows the days and keys it covers, not the traffic, and periods
// past the raw rows' retention still add up); requests refused before any model
// counted beside them by status; and the credits added per day from the ledger: sold (paid
// for), redeemed (a redemption code: free) or granted.
import { sql } from 'kysely';
import { checkMicros } from '../money.js';
import type { Dialect } from './dialect.js';
import { checkLimit, type Db } from './sql.js';
import type { LedgerKind, TimeRange, UsageReport, UsageReportTotals } from './store.js';
import { rollupDays } from './usage.js';
import { USAGE_DAILY_SUMS } from './usage-rollup.js';
import { topByCost, type RankedUsage } from './usage-top.js';

const DEFAULT_TOP = 100;
const SOLD: readonly LedgerKind[] = ['top_up', 'subscription_credit'];

interface TotalsRow {
  requests: number | string | null;
  prompt_tokens: number | string | null;
  completion_tokens: number | string | null;
  cost_micros: number | string | null;
  cached_tokens: number | string | null;
  cache_write_tokens: number | string | null;
  reasoning_tokens: number | string | null;
  counted_requests: number | string | null;
  unpaid_micros: number | string | null;
}

/**
 * The usage of the whole UTC days the range touches (see rollupDays): the console asks for
 * whole days. The credits added are read from the ledger for the range as given.
 */
export async function reportUsage(db: Db, dialect: Dialect, range: TimeRange, options: { accountId?: string; top?: number } = {}): Promise<UsageReport> {
  const top = checkLimit(options.top ?? DEFAULT_TOP);
  const { accountId } = options;
  const { fromDay, untilDay } = rollupDays(range);
  // Days, models and statuses: of every account from their own rollup, of one from its rows
  // in usage_daily, as the same columns (a subquery both databases fold into the query).
  const columns = ['day', 'model', 'status', ...USAGE_DAILY_SUMS] as const;
  const rows =
    accountId === undefined
      ? db.selectFrom('usage_models_daily').select(columns).where('day', '>=', fromDay).where('day', '<', untilDay).as('rows')
      : db.selectFrom('usage_daily').select(columns).where('account_id', '=', accountId).where('day', '>=', fromDay).where('day', '<', untilDay).as('rows');
  const inRange = db.selectFrom(rows);
  const cost = sql<number | string>`sum(cost_micros)`;
  const summed = inRange.select((eb) => [
    eb.fn.sum<number | string>('requests').as('requests'),
    eb.fn.sum<number | string>('prompt_tokens').as('prompt_tokens'),
    eb.fn.sum<number | string>('completion_tokens').as('completion_tokens'),
    cost.as('cost_micros'),
    eb.fn.sum<number | string>('cached_tokens').as('cached_tokens'),
    sql<number | string>`sum(cache_write_tokens + cache_write_1h_tokens)`.as('cache_write_tokens'),
    eb.fn.sum<number | string>('reasoning_tokens').as('reasoning_tokens'),
    eb.fn.sum<number | string>('counted_requests').as('counted_requests'),
    eb.fn.sum<number | string>('shortfall_micros').as('unpaid_micros'),
  ]);
  let refused = db.selectFrom('refusal_daily').where('day', '>=', fromDay).where('day', '<', untilDay);
  if (accountId !== undefined) refused = refused.where('account_id', '=', accountId);
  let added = db
    .selectFrom('ledger_entries')
    // A redemption code's top-up names the code: credits given away, not sold.
    .leftJoin('redemption_codes', 'redemption_codes.id', 'ledger_entries.reference')
    .where('ledger_entries.created_at', '>=', range.fromIso)
    .where('ledger_entries.created_at', '<', range.untilIso)
    .where('ledger_entries.kind', 'in', [...SOLD, 'grant'])
    // Literal, as the partial index ledger_entries_added_created_at says it: SQLite uses a
    // partial index only for a query that repeats its condition.
    .where(sql<boolean>`ledger_entries.kind <> 'usage'`);
  if (accountId !== undefined) added = added.where('ledger_entries.account_id', '=', accountId);
  const addedDay = dialect.utcDay('ledger_entries.created_at');
  const redeemed = sql<number>`case when redemption_codes.id is null then 0 else 1 end`;
  const [days, byModel, byAccount, byKey, byStatus, refusedByStatus, addedRows] = await Promise.all([
    summed.select('day').groupBy('day').orderBy('day').execute(),
    summed.select('model').groupBy('model').orderBy(cost, 'desc').orderBy('model').limit(top).execute(),
    topByCost(db, 'account', fromDay, untilDay, top, { accountId }),
    topByCost(db, 'key', fromDay, untilDay, top, { accountId }),
    inRange
      .select((eb) => ['status', eb.fn.sum<number | string>('requests').as('requests')])
      .groupBy('status')
      .orderBy('status')
      .execute(),
    refused.select((eb) => ['status', eb.fn.sum<number | string>('requests').as('requests')]).groupBy('status').execute(),
    added
      .select((eb) => [addedDay.as('day'), 'ledger_entries.kind', redeemed.as('redeemed'), eb.fn.sum<number | string>('ledger_entries.amount_micros').as('micros')])
      .groupBy([addedDay, 'ledger_entries.kind', redeemed])
      .orderBy(addedDay)
      .execute(),
  ]);
  const [emails, keyNames] = await Promise.all([
    namesOf(db, 'accounts', 'email', byAccount.map((row) => row.id)),
    namesOf(db, 'api_keys', 'name', byKey.map((row) => row.id)),
  ]);
  const creditsAdded = new Map<string, UsageReport['creditsAdded'][number]>();
  for (const row of addedRows) {
    const day = creditsAdded.get(row.day) ?? { date: row.day, soldMicros: 0, redeemedMicros: 0, grantedMicros: 0 };
    const micros = checkMicros(Number(row.micros));
    if (Number(row.redeemed) === 1) day.redeemedMicros += micros;
    else if ((SOLD as readonly string[]).includes(row.kind)) day.soldMicros += micros;
    else day.grantedMicros += micros;
    creditsAdded.set(row.day, day);
  }
  return {
    days: days.map((row) => ({ date: row.day, ...totalsOf(row) })),
    byModel: byModel.map((row) => ({ model: row.model, ...totalsOf(row) })),
    // An account is never deleted; a key may be, and then has no name.
    byAccount: byAccount.map((row) => ({ accountId: row.id, email: emails.get(row.id) ?? '', ...rankedTotals(row) })),
    byKey: byKey.map((row) => ({ keyId: row.id, keyName: keyNames.get(row.id) ?? '', accountId: row.accountId, ...rankedTotals(row) })),
    byStatus: statusCounts(byStatus, refusedByStatus),
    creditsAdded: [...creditsAdded.values()],
  };
}

/** The `column` of each of `ids` in `table` (read for the few ranked rows only). */
async function namesOf(db: Db, table: 'accounts' | 'api_keys', column: 'email' | 'name', ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql<{ id: string; name: string }>`select id, ${sql.ref(column)} as name from ${sql.table(table)} where id in (${sql.join(ids)})`.execute(db);
  return new Map(rows.map((row) => [row.id, row.name]));
}

function rankedTotals({ sums }: RankedUsage): UsageReportTotals {
  return {
    requests: sums.requests,
    promptTokens: sums.prompt_tokens,
    completionTokens: sums.completion_tokens,
    costMicros: sums.cost_micros,
    cachedTokens: sums.cached_tokens,
    cacheWriteTokens: sums.cache_write_tokens + sums.cache_write_1h_tokens,
    reasoningTokens: sums.reasoning_tokens,
    countedRequests: sums.counted_requests,
    unpaidMicros: sums.shortfall_micros,
  };
}

type StatusRow = { status: number | string; requests: number | string | null };

/** Answers by status, refusals included: `refused` says how many of `requests` were refused before any model. */
function statusCounts(used: readonly StatusRow[], refused: readonly StatusRow[]): UsageReport['byStatus'] {
  const byStatus = new Map<number, UsageReport['byStatus'][number]>();
  for (const row of used) byStatus.set(Number(row.status), { status: Number(row.status), requests: Number(row.requests ?? 0), refused: 0 });
  for (const row of refused) {
    const counts = byStatus.get(Number(row.status)) ?? { status: Number(row.status), requests: 0, refused: 0 };
    counts.requests += Number(row.requests ?? 0);
    counts.refused += Number(row.requests ?? 0);
    byStatus.set(counts.status, counts);
  }
  return [...byStatus.values()].sort((a, b) => a.status - b.status);
}

/** PostgreSQL sums bigint into NUMERIC (a string from pg), and integer into bigint. */
function totalsOf(row: TotalsRow): UsageReportTotals {
  return {
    requests: Number(row.requests ?? 0),
    promptTokens: Number(row.prompt_tokens ?? 0),
    completionTokens: Number(row.completion_tokens ?? 0),
    costMicros: checkMicros(Number(row.cost_micros ?? 0)),
    cachedTokens: Number(row.cached_tokens ?? 0),
    cacheWriteTokens: Number(row.cache_write_tokens ?? 0),
    reasoningTokens: Number(row.reasoning_tokens ?? 0),
    countedRequests: Number(row.counted_requests ?? 0),
    unpaidMicros: checkMicros(Number(row.unpaid_micros ?? 0)),
  };
}
