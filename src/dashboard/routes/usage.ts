// Usage over a period of UTC days: sums per day (every day, zeros included), per day and
// model, per day and key, the newest requests; and the same requests as CSV.
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { USAGE_CSV_HEADER, usageCsvRow } from '../../billing/usage-csv.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import type { Account, TimeRange, UsageTotals } from '../../store/store.js';
import { ownOnly, signedIn, type DashboardServices } from '../context.js';
import { TokenKinds } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';
import { DayRangeQuery, parseDayRange } from '../../validation/usage-range.js';

const RECENT_LIMIT = 100;
/** Records per read of the CSV, and per chunk it sends. */
const CSV_PAGE_SIZE = 1_000;
/** The days, and in an organisation one member's usage (`member`: their account id). */
const UsageQuery = Type.Object({ ...DayRangeQuery.properties, member: Type.Optional(Type.String({ maxLength: 100 })) });

const Totals = {
  requests: Type.Integer(),
  promptTokens: Type.Integer(),
  completionTokens: Type.Integer(),
  costMicros: Type.Integer(),
};
const Usage = Type.Object({
  from: Type.String(),
  to: Type.String(),
  days: Type.Array(Type.Object({ date: Type.String(), ...Totals })),
  byModel: Type.Array(Type.Object({ date: Type.String(), model: Type.String(), ...Totals })),
  byKey: Type.Array(Type.Object({ date: Type.String(), keyId: Type.String(), keyName: Type.String(), ...Totals })),
  recent: Type.Array(
    Type.Object({
      id: Type.String(),
      requestId: Type.String(),
      createdAt: Type.String(),
      model: Type.String(),
      keyId: Type.String(),
      keyName: Type.String(),
      promptTokens: Type.Integer(),
      completionTokens: Type.Integer(),
      ...TokenKinds,
      costMicros: Type.Integer(),
      shortfallMicros: Type.Integer(),
      latencyMs: Type.Integer(),
      status: Type.Integer(),
      streamed: Type.Boolean(),
      finishReason: Nullable(Type.String()),
    }),
  ),
});
export type Usage = JsonOf<typeof Usage, Json.Usage>;

export function usageRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store } = services;

  /**
   * Key id → name, for the account's own keys only. Keys are revoked, never deleted, so
   * every record's key is found; '' only guards against a row removed by hand.
   */
  async function keyNames(accountId: string): Promise<Map<string, string>> {
    return new Map((await store.listKeys(accountId)).map((key) => [key.id, key.name]));
  }

  dashboard.get('/usage', { schema: { querystring: UsageQuery, response: { 200: Usage } } }, async (request) => {
    const { account, memberId } = usageScope(request, request.query.member);
    const range = parseDayRange(request.query);
    const [summary, recent, names] = await Promise.all([
      store.summarizeUsage(account.id, range.time, { memberId }),
      store.listUsage(account.id, { sinceIso: range.time.fromIso, untilIso: range.time.untilIso, limit: RECENT_LIMIT, memberId }),
      keyNames(account.id),
    ]);
    const byDate = new Map(summary.days.map((day) => [day.date, day]));
    return {
      from: range.from,
      to: range.to,
      days: range.days.map((date) => ({ date, ...totals(byDate.get(date)) })),
      byModel: summary.byModel.map((row) => ({ date: row.date, model: row.model, ...totals(row) })),
      byKey: summary.byKey.map((row) => ({ date: row.date, keyId: row.keyId, keyName: names.get(row.keyId) ?? '', ...totals(row) })),
      recent: recent.map((record) => ({
        id: record.id,
        requestId: record.requestId,
        createdAt: record.createdAt,
        model: record.model,
        keyId: record.keyId,
        keyName: names.get(record.keyId) ?? '',
        promptTokens: record.promptTokens,
        completionTokens: record.completionTokens,
        cachedTokens: record.cachedTokens,
        cacheWriteTokens: record.cacheWriteTokens + record.cacheWrite1hTokens,
        reasoningTokens: record.reasoningTokens,
        basis: record.basis,
        outcome: record.outcome,
        costMicros: record.costMicros,
        shortfallMicros: record.shortfallMicros,
        latencyMs: record.latencyMs,
        status: record.status,
        streamed: record.streamed,
        finishReason: record.finishReason,
      })),
    };
  });

  dashboard.get('/usage.csv', { schema: { querystring: UsageQuery } }, async (request, reply) => {
    const { account, memberId } = usageScope(request, request.query.member);
    const range = parseDayRange(request.query);
    const names = await keyNames(account.id);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="lmgate-usage-${range.from}-${range.to}.csv"`)
      .send(Readable.from(csvLines(account.id, range.time, names, memberId)));
  });

  /**
   * The header, then every request of the period, newest first, read a page at a time: a
   * year of heavy use is streamed, never held in memory whole. A page goes out as one
   * chunk, so the stream is not a write per row.
   */
  async function* csvLines(accountId: string, time: TimeRange, names: Map<string, string>, memberId: string | undefined): AsyncGenerator<string> {
    yield `${USAGE_CSV_HEADER}\r\n`;
    let chunk = '';
    let rows = 0;
    for await (const record of store.exportUsage({ ...time, accountId, memberId, newestFirst: true, pageSize: CSV_PAGE_SIZE })) {
      chunk += `${usageCsvRow(record, names.get(record.keyId) ?? '')}\r\n`;
      if (++rows === CSV_PAGE_SIZE) {
        yield chunk;
        chunk = '';
        rows = 0;
      }
    }
    if (chunk !== '') yield chunk;
  }
}

/** Whose usage: a `member` of an organisation sees their own; the others everyone's, or one member's (`member`). */
function usageScope(request: FastifyRequest, member: string | undefined): { account: Account; memberId: string | undefined } {
  const caller = signedIn(request);
  return { account: caller.account, memberId: ownOnly(caller, 'usage') ?? member };
}

function totals(row: UsageTotals | undefined): UsageTotals {
  return {
    requests: row?.requests ?? 0,
    promptTokens: row?.promptTokens ?? 0,
    completionTokens: row?.completionTokens ?? 0,
    costMicros: row?.costMicros ?? 0,
  };
}
