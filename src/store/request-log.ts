// The customer's request log: every API request of an account, newest first. Those that
// reached a model are its usage records; those refused before are `refused_requests`. The
// two are read side by side, each by its (account_id, created_at) index, and merged.
import type { Selectable } from 'kysely';
import { checkLimit, chunked, type Db } from './sql.js';
import { refusalRollups, upsertRollups } from './usage-rollup.js';
import type { RefusedRequest, RequestLogEntry, RequestLogQuery } from './request-log-store.js';
import type { RefusedRequestsTable, UsageRecordsTable } from './tables.js';
import type { UsageOutcome } from './usage-basis.js';

// 10 columns × 1000 rows: far below PostgreSQL's 65535 bound parameters.
const REFUSALS_PER_INSERT = 1000;

/** Stores a batch of refusals and counts them in refusal_daily; `trx` is a transaction. */
export async function recordRefusals(trx: Db, refusals: readonly RefusedRequest[]): Promise<void> {
  if (refusals.length === 0) return;
  for (const chunk of chunked(refusals, REFUSALS_PER_INSERT)) {
    await trx
      .insertInto('refused_requests')
      .values(
        chunk.map((r) => ({
          id: r.id,
          request_id: r.requestId,
          account_id: r.accountId,
          key_id: r.keyId,
          member_id: r.memberId,
          model: r.model,
          path: r.path,
          status: r.status,
          reason: r.reason,
          created_at: r.createdAt,
        })),
      )
      .execute();
  }
  await upsertRollups(trx, 'refusal_daily', refusalRollups(refusals));
}

export async function listRequestLog(db: Db, accountId: string, query: RequestLogQuery): Promise<RequestLogEntry[]> {
  const limit = checkLimit(query.limit);
  const page = <T extends 'usage_records' | 'refused_requests'>(table: T) => {
    let select = db
      .selectFrom(table as 'usage_records')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('created_at', '>=', query.sinceIso)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit);
    const { before } = query;
    if (before) select = select.where((eb) => eb.or([eb('created_at', '<', before.at), eb.and([eb('created_at', '=', before.at), eb('id', '<', before.id)])]));
    if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
    if (query.memberId !== undefined) select = select.where('member_id', '=', query.memberId);
    if (query.model !== undefined) select = select.where('model', '=', query.model);
    return select;
  };
  let used = page('usage_records');
  if (query.outcome === 'succeeded') used = used.where('status', '<', 400);
  if (query.outcome === 'failed') used = used.where('status', '>=', 400);
  const [usage, refused] = await Promise.all([
    used.execute(),
    query.outcome === 'succeeded' ? Promise.resolve([]) : (page('refused_requests').execute() as unknown as Promise<Selectable<RefusedRequestsTable>[]>),
  ]);
  return [...usage.map(fromUsage), ...refused.map(fromRefusal)].sort(newestFirst).slice(0, limit);
}

function newestFirst(a: RequestLogEntry, b: RequestLogEntry): number {
  if (a.at !== b.at) return a.at < b.at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

function fromUsage(row: Selectable<UsageRecordsTable>): RequestLogEntry {
  return {
    id: row.id,
    requestId: row.request_id,
    at: row.created_at,
    keyId: row.key_id,
    model: row.model,
    status: row.status,
    reason: null,
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    cacheWriteTokens: Number(row.cache_write_tokens) + Number(row.cache_write_1h_tokens),
    reasoningTokens: Number(row.reasoning_tokens),
    basis: row.basis === 'counted' ? 'counted' : 'reported',
    outcome: row.outcome as UsageOutcome,
    costMicros: Number(row.cost_micros),
    shortfallMicros: Number(row.shortfall_micros),
    streamed: Number(row.streamed) === 1,
    refused: false,
  };
}

function fromRefusal(row: Selectable<RefusedRequestsTable>): RequestLogEntry {
  return {
    id: row.id,
    requestId: row.request_id,
    at: row.created_at,
    keyId: row.key_id,
    model: row.model,
    status: row.status,
    reason: row.reason,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    basis: null,
    outcome: null,
    costMicros: 0,
    shortfallMicros: 0,
    streamed: false,
    refused: true,
  };
}
