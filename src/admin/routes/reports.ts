// What the operator reads across accounts: usage, upstream health, the audit log, the
// catalogue and tiers as configured, and who the caller is.
import { Type } from '@sinclair/typebox';
import { creditsToMicros } from '../../money.js';
import { DayRangeQuery, parseDayRange } from '../../validation/usage-range.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { deploymentRows } from '../../observability/upstream-health.js';
import type { UsageReportTotals } from '../../store/store.js';
import { callerOf, type AdminServices } from '../context.js';
import type * as Json from '../api-types.js';
import { AdminAuditEntry, auditEntryView } from '../views.js';
import { auditNames } from '../audit-names.js';
import type { JsonOf } from '../../http/typebox.js';

const Totals = {
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cost_micros: Type.Integer(),
  cached_tokens: Type.Integer({ description: 'of prompt_tokens: read from a prompt cache' }),
  cache_write_tokens: Type.Integer({ description: 'of prompt_tokens: written to a prompt cache (5-minute and 1-hour)' }),
  reasoning_tokens: Type.Integer({ description: 'of completion_tokens' }),
  counted_requests: Type.Integer({ description: "billed on lmgate's count: the upstream reported no usage" }),
  unpaid_micros: Type.Integer({ description: 'of cost_micros, what accounts that ran out could not pay' }),
};
const UsageQuery = Type.Object({ ...DayRangeQuery.properties, account_id: Type.Optional(Type.String({ maxLength: 100, description: 'one account only' })) });
const Usage = Type.Object({
  from: Type.String(),
  to: Type.String(),
  days: Type.Array(
    Type.Object({
      date: Type.String(),
      ...Totals,
      credits_sold_micros: Type.Integer({ description: 'paid: top-ups and subscription credits' }),
      credits_redeemed_micros: Type.Integer({ description: 'from redemption codes (free, not sold)' }),
      credits_granted_micros: Type.Integer(),
    }),
    { description: 'every day of the period, zeros included' },
  ),
  by_model: Type.Array(Type.Object({ model: Type.String(), ...Totals })),
  by_account: Type.Array(Type.Object({ account_id: Type.String(), email: Type.String(), ...Totals })),
  by_key: Type.Array(Type.Object({ key_id: Type.String(), key_name: Type.String(), account_id: Type.String(), ...Totals })),
  by_status: Type.Array(
    Type.Object({ status: Type.Integer(), requests: Type.Integer({ description: 'refusals included' }), refused: Type.Integer({ description: 'of requests, refused before any model' }) }),
    { description: 'every answer by HTTP status, requests refused before any model included' },
  ),
});
export type Usage = JsonOf<typeof Usage, Json.UsageReport>;
const Upstreams = Type.Object({
  deployments: Type.Array(
    Type.Object({
      model: Type.String(),
      deployment: Type.String(),
      upstream: Type.String(),
      state: Type.String({ description: 'closed | open | half_open, or - before the first request' }),
      in_flight: Type.Integer(),
      ok: Type.Integer(),
      rejected: Type.Integer(),
      failed: Type.Integer(),
      aborted: Type.Integer(),
      mean_first_byte_ms: Nullable(Type.Number()),
    }),
  ),
});
export type Upstreams = JsonOf<typeof Upstreams, Json.Upstreams>;
const AuditQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  before_id: Type.Optional(Type.Integer({ minimum: 1, description: 'entries older than this one (the previous page’s next_before_id)' })),
  target_id: Type.Optional(Type.String({ maxLength: 200 })),
  actor_id: Type.Optional(Type.String({ maxLength: 200 })),
});
const Audit = Type.Object({ entries: Type.Array(AdminAuditEntry), next_before_id: Nullable(Type.Integer()) });
export type Audit = JsonOf<typeof Audit, Json.AuditPage>;
const Catalog = Type.Object({
  default_tier: Type.String(),
  currency: Type.String({ description: 'of price_month: payments.stripe.currency, or usd without payments' }),
  tiers: Type.Array(
    Type.Object({
      name: Type.String(),
      rpm: Type.Integer(),
      tpm: Type.Integer(),
      concurrency: Type.Integer(),
      models: Type.Array(Type.String()),
      subscription: Type.Boolean(),
      price_month: Type.Number(),
      credits_month_micros: Type.Integer(),
      price_multiplier_ppm: Type.Integer({ description: 'every price × this / 1,000,000 for the tier' }),
    }),
  ),
  models: Type.Array(
    Type.Object({
      id: Type.String(),
      owned_by: Type.String(),
      context: Type.Integer(),
      max_output: Type.Integer(),
      input_per_mtok_micros: Type.Integer(),
      cached_input_per_mtok_micros: Type.Integer(),
      cache_write_per_mtok_micros: Type.Integer(),
      cache_write_1h_per_mtok_micros: Type.Integer(),
      output_per_mtok_micros: Type.Integer(),
      reasoning_per_mtok_micros: Type.Integer(),
      endpoints: Type.Array(Type.String(), { description: 'which of chat, responses, completions and embeddings it serves' }),
      tiers: Type.Array(Type.String()),
    }),
  ),
});
export type Catalog = JsonOf<typeof Catalog, Json.Catalog>;
const Me = Type.Object({ actor: Type.Object({ kind: Type.String(), id: Type.String() }), scopes: Type.Array(Type.String()) });
export type Me = JsonOf<typeof Me, Json.Me>;

export function reportRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, metrics, tiers, catalog, config } = services;

  admin.get('/usage', { schema: { tags: ['usage'], summary: 'Usage across accounts by day, model, account, key and status', querystring: UsageQuery, response: { 200: Usage } } }, async (request) => {
    const range = parseDayRange(request.query);
    const report = await store.reportUsage(range.time, { accountId: request.query.account_id });
    const byDate = new Map(report.days.map((day) => [day.date, day]));
    const addedByDate = new Map(report.creditsAdded.map((day) => [day.date, day]));
    return {
      from: range.from,
      to: range.to,
      days: range.days.map((date) => ({
        date,
        ...totalsView(byDate.get(date)),
        credits_sold_micros: addedByDate.get(date)?.soldMicros ?? 0,
        credits_redeemed_micros: addedByDate.get(date)?.redeemedMicros ?? 0,
        credits_granted_micros: addedByDate.get(date)?.grantedMicros ?? 0,
      })),
      by_model: report.byModel.map((row) => ({ model: row.model, ...totalsView(row) })),
      by_account: report.byAccount.map((row) => ({ account_id: row.accountId, email: row.email, ...totalsView(row) })),
      by_key: report.byKey.map((row) => ({ key_id: row.keyId, key_name: row.keyName, account_id: row.accountId, ...totalsView(row) })),
      by_status: report.byStatus,
    };
  });

  admin.get('/upstreams', { schema: { tags: ['health'], summary: "Upstream deployments' health as this instance sees it (as lmgate upstreams)", response: { 200: Upstreams } } }, async () => ({
    deployments: deploymentRows(await metrics.upstreamText()),
  }));

  admin.get('/audit', { schema: { tags: ['audit'], summary: 'The audit log, newest first', querystring: AuditQuery, response: { 200: Audit } } }, async (request) => {
    const { limit, before_id: beforeId, target_id: targetId, actor_id: actorId } = request.query;
    const entries = await store.listAudit({ limit, beforeId, targetId, actorId });
    const nameOf = await auditNames(store, entries);
    return { entries: entries.map((entry) => auditEntryView(entry, nameOf)), next_before_id: entries.length === limit ? entries[entries.length - 1]!.id : null };
  });

  admin.get('/catalog', { schema: { tags: ['catalog'], summary: 'Tiers and models as configured, with prices', response: { 200: Catalog } } }, async () => ({
    default_tier: config.default_tier,
    currency: config.payments.stripe?.currency ?? 'usd',
    tiers: tiers.list().map((tier) => ({
      name: tier.name,
      rpm: tier.config.rpm,
      tpm: tier.config.tpm,
      concurrency: tier.config.concurrency,
      models: tier.config.models,
      subscription: tier.config.subscription,
      price_month: tier.config.price_month,
      credits_month_micros: creditsToMicros(tier.config.credits_month),
      price_multiplier_ppm: tier.multiplierPpm,
    })),
    models: catalog.list().map((model) => ({
      id: model.id,
      owned_by: model.ownedBy,
      context: model.contextTokens,
      max_output: model.maxOutputTokens,
      input_per_mtok_micros: model.inputPerMTokMicros,
      cached_input_per_mtok_micros: model.cachedInputPerMTokMicros,
      cache_write_per_mtok_micros: model.cacheWritePerMTokMicros,
      cache_write_1h_per_mtok_micros: model.cacheWrite1hPerMTokMicros,
      output_per_mtok_micros: model.outputPerMTokMicros,
      reasoning_per_mtok_micros: model.reasoningPerMTokMicros,
      endpoints: [...model.endpoints],
      tiers: tiers
        .list()
        .filter((tier) => tier.allowsModel(model.id))
        .map((tier) => tier.name),
    })),
  }));

  admin.get('/me', { schema: { tags: ['catalog'], summary: 'Who is calling, with which scopes', response: { 200: Me } } }, async (request) => {
    const { actor, scopes } = callerOf(request);
    return { actor, scopes: [...scopes] };
  });
}

function totalsView(row: UsageReportTotals | undefined) {
  return {
    requests: row?.requests ?? 0,
    prompt_tokens: row?.promptTokens ?? 0,
    completion_tokens: row?.completionTokens ?? 0,
    cost_micros: row?.costMicros ?? 0,
    cached_tokens: row?.cachedTokens ?? 0,
    cache_write_tokens: row?.cacheWriteTokens ?? 0,
    reasoning_tokens: row?.reasoningTokens ?? 0,
    counted_requests: row?.countedRequests ?? 0,
    unpaid_micros: row?.unpaidMicros ?? 0,
  };
}
