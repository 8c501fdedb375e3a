// Usage read across accounts for the operator: sums over a period by UTC day, model,
// account, key and status, read from the daily rollups (usage_daily, refusal_daily; never
// the raw rows, so the cost of a read follows the days and keys it covers, not the traffic,
// and periods past the raw rows' retention still add up); requests refused before any model
// counted beside them by status; and the credits added per day from the ledger: sold (paid
// for), redeemed (a redemption code: free) or granted.
import { sql } from 'kysely';
import { checkMicros } from '../money.js';
import { checkLimit, type Db } from './sql.js';
import type { LedgerKind, TimeRange, UsageReport, UsageReportTotals } from './store.js';
import { rollupDays } from './usage.js';

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
export async function reportUsage(db: Db, range: TimeRange, options: { accountId?: string; top?: number } = {}): Promise<UsageReport> {
  const top = checkLimit(options.top ?? DEFAULT_TOP);
  const { fromDay, untilDay } = rollupDays(range);
  const cost = sql<number | string>`sum(usage_daily.cost_micros)`;
  let inRange = db.selectFrom('usage_daily').where('usage_daily.day', '>=', fromDay).where('usage_daily.day', '<', untilDay);
  if (options.accountId !== undefined) inRange = inRange.where('usage_daily.account_id', '=', options.accountId);
  const summed = inRange.select((eb) => [
    eb.fn.sum<number | string>('usage_daily.requests').as('requests'),
    eb.fn.sum<number | string>('usage_daily.prompt_tokens').as('prompt_tokens'),
    eb.fn.sum<number | string>('usage_daily.completion_tokens').as('completion_tokens'),
    cost.as('cost_micros'),
    eb.fn.sum<number | string>('usage_daily.cached_tokens').as('cached_tokens'),
    sql<number | string>`sum(usage_daily.cache_write_tokens + usage_daily.cache_write_1h_tokens)`.as('cache_write_tokens'),
    eb.fn.sum<number | string>('usage_daily.reasoning_tokens').as('reasoning_tokens'),
    eb.fn.sum<number | string>('usage_daily.counted_requests').as('counted_requests'),
    eb.fn.sum<number | string>('usage_daily.shortfall_micros').as('unpaid_micros'),
  ]);
  let refused = db.selectFrom('refusal_daily').where('day', '>=', fromDay).where('day', '<', untilDay);
  if (options.accountId !== undefined) refused = refused.where('account_id', '=', options.accountId);
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
  if (options.accountId !== undefined) added = added.where('ledger_entries.account_id', '=', options.accountId);
  // The ledger's created_at stays ISO 8601 UTC text: its first ten characters are the UTC day on both databases.
  const addedDay = sql<string>`substr(ledger_entries.created_at, 1, 10)`;
  const redeemed = sql<number>`case when redemption_codes.id is null then 0 else 1 end`;
  const [days, byModel, byAccount, byKey, byStatus, refusedByStatus, addedRows] = await Promise.all([
    summed.select('usage_daily.day').groupBy('usage_daily.day').orderBy('usage_daily.day').execute(),
    summed.select('usage_daily.model').groupBy('usage_daily.model').orderBy(cost, 'desc').orderBy('usage_daily.model').limit(top).execute(),
    summed
      .innerJoin('accounts', 'accounts.id', 'usage_daily.account_id')
      .select(['usage_daily.account_id', 'accounts.email'])
      .groupBy(['usage_daily.account_id', 'accounts.email'])
      .orderBy(cost, 'desc')
      .orderBy('usage_daily.account_id')
      .limit(top)
      .execute(),
    summed
      .leftJoin('api_keys', 'api_keys.id', 'usage_daily.key_id')
      .select(['usage_daily.key_id', 'usage_daily.account_id', 'api_keys.name'])
      .groupBy(['usage_daily.key_id', 'usage_daily.account_id', 'api_keys.name'])
      .orderBy(cost, 'desc')
      .orderBy('usage_daily.key_id')
      .limit(top)
      .execute(),
    inRange
      .select((eb) => ['usage_daily.status', eb.fn.sum<number | string>('usage_daily.requests').as('requests')])
      .groupBy('usage_daily.status')
      .orderBy('usage_daily.status')
      .execute(),
    refused.select((eb) => ['status', eb.fn.sum<number | string>('requests').as('requests')]).groupBy('status').execute(),
    added
      .select((eb) => [addedDay.as('day'), 'ledger_entries.kind', redeemed.as('redeemed'), eb.fn.sum<number | string>('ledger_entries.amount_micros').as('micros')])
      .groupBy([addedDay, 'ledger_entries.kind', redeemed])
      .orderBy(addedDay)
      .execute(),
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
    byAccount: byAccount.map((row) => ({ accountId: row.account_id, email: row.email, ...totalsOf(row) })),
    byKey: byKey.map((row) => ({ keyId: row.key_id, keyName: row.name ?? '', accountId: row.account_id, ...totalsOf(row) })),
    byStatus: statusCounts(byStatus, refusedByStatus),
    creditsAdded: [...creditsAdded.values()],
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
