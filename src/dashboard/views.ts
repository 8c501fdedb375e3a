// How accounts, keys and plans appear in the dashboard's JSON (camelCase, money in micros).
import type { FastifyRequest } from 'fastify';
import { creditsToMicros } from '../billing/money.js';
import type { Tier } from '../billing/tiers.js';
import type { Config } from '../config/schema.js';
import type { Account, ApiKeyRecord } from '../store/store.js';

export function accountView(account: Account): Record<string, unknown> {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    tier: account.tier,
    status: account.status,
    subscriptionStatus: account.subscriptionStatus,
    createdAt: account.createdAt,
  };
}

export function keyView(key: ApiKeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    lastFour: key.lastFour,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    status: key.revokedAt === null ? 'active' : 'revoked',
  };
}

export function planView(tier: Tier, currentTier: Tier): Record<string, unknown> {
  const { config } = tier;
  return {
    name: tier.name,
    subscription: config.subscription,
    priceMonth: config.subscription ? config.price_month : null,
    creditsMonthMicros: config.credits_month > 0 ? creditsToMicros(config.credits_month) : null,
    rpm: config.rpm,
    tpm: config.tpm,
    concurrency: config.concurrency,
    models: config.models,
    // A plan without a subscription costs nothing: customers may switch to it themselves.
    selfService: !config.subscription,
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
