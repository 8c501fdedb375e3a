// Usage over a period of UTC days: sums per day (every day, zeros included), per day and
// model, per day and key, the newest requests; and the same requests as CSV.
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { formatCredits } from '../../money.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import type { Account, UsageRecord, UsageTotals } from '../../store/store.js';
import { ownOnly, signedIn, type DashboardServices } from '../context.js';
import { TokenKinds } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';
import { DayRangeQuery, dayTimeRange, parseDayRange } from '../../validation/usage-range.js';

const RECENT_LIMIT = 100;
/** The days, and in an organisation one member's usage (`member`: their account id). */
const UsageQuery = Type.Object({ ...DayRangeQuery.properties, member: Type.Optional(Type.String({ maxLength: 100 })) });
// New columns go at the end, so a script that reads the first ones by position keeps working.
const CSV_HEADER =
  'created_at,request_id,model,key_id,key_name,prompt_tokens,completion_tokens,cost_credits,latency_ms,status,streamed,finish_reason,' +
  'cached_tokens,cache_write_tokens,cache_write_1h_tokens,reasoning_tokens,basis,outcome,unpaid_credits';

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
      .send(Readable.from(csvLines(account.id, range.days, names, memberId)));
  });

  /**
   * The header, then every request of the period, newest first, one UTC day at a time: a
   * year of heavy use is streamed, never held in memory whole.
   */
  async function* csvLines(accountId: string, days: readonly string[], names: Map<string, string>, memberId: string | undefined): AsyncGenerator<string> {
    yield `${CSV_HEADER}\r\n`;
    for (const day of [...days].reverse()) {
      const { fromIso, untilIso } = dayTimeRange(day);
      const records = await store.listUsage(accountId, { sinceIso: fromIso, untilIso, memberId });
      if (records.length > 0) yield records.map((record) => `${csvRow(record, names.get(record.keyId) ?? '')}\r\n`).join('');
    }
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

function csvRow(record: UsageRecord, keyName: string): string {
  return [
    record.createdAt,
    csvText(record.requestId),
    csvText(record.model),
    record.keyId,
    csvText(keyName),
    record.promptTokens,
    record.completionTokens,
    formatCredits(record.costMicros),
    record.latencyMs,
    record.status,
    record.streamed,
    csvText(record.finishReason ?? ''),
    record.cachedTokens,
    record.cacheWriteTokens,
    record.cacheWrite1hTokens,
    record.reasoningTokens,
    record.basis,
    record.outcome,
    formatCredits(record.shortfallMicros),
  ].join(',');
}

/**
 * RFC 4180 quoting, and a leading apostrophe for text a spreadsheet would run as a formula
 * (a key named `=HYPERLINK(...)` is the customer's own text, but opened in Excel it is code).
 */
function csvText(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
