// How accounts, keys and plans appear in the dashboard's JSON (camelCase, money in micros):
// each view's schema, which routes name in their response schemas, and its function. The
// JSON types themselves are in api-types.ts, where the web app reads them.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { creditsToMicros } from '../money.js';
import { standingOf, type Tier } from '../billing/tiers.js';
import type { Config } from '../config/schema.js';
import { Nullable, type JsonOf } from '../http/typebox.js';
import type { Account, ApiKeyRecord } from '../store/store.js';
import type * as Json from './api-types.js';

export const AccountView = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  tier: Type.String(),
  status: Type.String(),
  subscriptionStatus: Type.String(),
  createdAt: Type.String(),
  /** 'operator' opens the console (/admin). */
  role: Type.String(),
});
export type AccountView = JsonOf<typeof AccountView, Json.AccountView>;

export const KeyView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  lastFour: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Nullable(Type.String()),
  revokedAt: Nullable(Type.String()),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  /** Revoked because it was reported found in public, and where. */
  leaked: Type.Boolean(),
  leakUrl: Nullable(Type.String()),
  /** The key's own controls, each null when unset. */
  expiresAt: Nullable(Type.String()),
  expired: Type.Boolean(),
  allowedModels: Type.Union([Type.Array(Type.String()), Type.Null()]),
  allowedIps: Type.Union([Type.Array(Type.String()), Type.Null()]),
  rpm: Nullable(Type.Integer()),
  /** Its credit limit, with what it spent in the limit's current window (the month, UTC, or all time). */
  creditLimitMicros: Nullable(Type.Integer()),
  creditLimitPeriod: Type.Union([Type.Literal('total'), Type.Literal('month'), Type.Null()]),
  creditSpentMicros: Nullable(Type.Integer()),
});
export type KeyView = JsonOf<typeof KeyView, Json.KeyView>;

export const PlanView = Type.Object({
  name: Type.String(),
  subscription: Type.Boolean(),
  priceMonth: Nullable(Type.Number()),
  /** What priceMonth is in (ISO 4217, lower case): payments.stripe.currency, else usd. */
  currency: Type.String(),
  creditsMonthMicros: Nullable(Type.Integer()),
  rpm: Type.Integer(),
  tpm: Type.Integer(),
  concurrency: Type.Integer(),
  models: Type.Array(Type.String()),
  selfService: Type.Boolean(),
  current: Type.Boolean(),
});
export type PlanView = JsonOf<typeof PlanView, Json.PlanView>;

export const StandingView = Type.Object({
  state: Type.Union([
    Type.Literal('ok'),
    Type.Literal('complimentary'),
    Type.Literal('past_due'),
    Type.Literal('suspended'),
    Type.Literal('subscription_required'),
    Type.Literal('subscription_lapsed'),
  ]),
  until: Nullable(Type.String()),
});
export type StandingView = JsonOf<typeof StandingView, Json.StandingView>;

export function standingView(account: Account, tier: Tier): StandingView {
  const standing = standingOf(account, tier);
  const until = standing.state === 'complimentary' ? standing.until : standing.state === 'past_due' ? standing.graceUntil : null;
  return { state: standing.state, until };
}

/** The signed-in account and the token state-changing calls must carry (sign-in, sign-up, session). */
export const SessionView = Type.Object({ account: AccountView, csrfToken: Type.String() });
export type SessionView = JsonOf<typeof SessionView, Json.SessionView>;

export function accountView(account: Account): AccountView {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    tier: account.tier,
    status: account.status,
    subscriptionStatus: account.subscriptionStatus,
    createdAt: account.createdAt,
    role: account.role,
  };
}

/** `spentMicros`: what the key spent in its credit limit's window (null without a limit). */
export function keyView(key: ApiKeyRecord, spentMicros: number | null): KeyView {
  const { creditLimit, ...controls } = key.controls;
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    lastFour: key.lastFour,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    status: key.revokedAt === null ? 'active' : 'revoked',
    leaked: key.revokedReason === 'leaked',
    leakUrl: key.leakUrl,
    ...controls,
    expired: key.controls.expiresAt !== null && Date.parse(key.controls.expiresAt) <= Date.now(),
    creditLimitMicros: creditLimit?.amountMicros ?? null,
    creditLimitPeriod: creditLimit?.period ?? null,
    creditSpentMicros: creditLimit === null ? null : spentMicros,
  };
}

/** `modelIds`: the catalogue; a plan shows the models it allows by name, never its glob patterns. */
export function planView(tier: Tier, currentTier: Tier, modelIds: readonly string[], config: Config): PlanView {
  const tierConfig = tier.config;
  return {
    name: tier.name,
    subscription: tierConfig.subscription,
    priceMonth: tierConfig.subscription ? tierConfig.price_month : null,
    currency: config.payments.stripe?.currency ?? 'usd',
    creditsMonthMicros: tierConfig.credits_month > 0 ? creditsToMicros(tierConfig.credits_month) : null,
    rpm: tierConfig.rpm,
    tpm: tierConfig.tpm,
    concurrency: tierConfig.concurrency,
    models: modelIds.filter((id) => tier.allowsModel(id)),
    // A plan without a subscription costs nothing: customers may switch to it themselves.
    selfService: !tierConfig.subscription,
    current: tier.name === currentTier.name,
  };
}

/** The API base addresses a client can use, as seen from this request (proxy-aware). */
export function baseUrls(request: FastifyRequest, config: Config): string[] {
  const origin = `${request.protocol}://${request.host}`;
  const urls = [`${origin}/v1`, `${origin}/api/v1`];
  if (config.server.api_host) urls.push(`https://${config.server.api_host}/v1`);
  return urls;
}

/**
 * A usage record's parts priced apart and its provenance, as the dashboard shows them
 * beside its totals: cache writes of both lifetimes together; basis and outcome null for a
 * refusal, which reached no model.
 */
export const TokenKinds = {
  cachedTokens: Type.Integer(),
  cacheWriteTokens: Type.Integer(),
  reasoningTokens: Type.Integer(),
  basis: Type.Union([Type.Literal('reported'), Type.Literal('counted'), Type.Null()]),
  outcome: Type.Union([Type.Literal('completed'), Type.Literal('client_gone'), Type.Literal('upstream_failed'), Type.Literal('drained'), Type.Null()]),
};
