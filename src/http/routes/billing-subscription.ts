// GET /api/billing/subscription (spec 4.2): the calling key's account, its tier and
// subscription, balance and reserved credits, limits and what is left of them. On the
// service host, not under a versioned base. It answers for an account whose paid
// subscription lapsed (that is when it is most needed), but not for a suspended one.
import { Type, type Static } from '@sinclair/typebox';
import type { AppServices } from '../../services.js';
import { assertKeyAllowsIp, assertKeyNotExpired } from '../../auth/key-controls.js';
import { MICROS_PER_CREDIT } from '../../money.js';
import { ForbiddenError } from '../../errors.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import { Nullable, type TypeBoxFastify } from '../typebox.js';

const Amount = Type.Object({ credits: Type.Number(), micros: Type.Integer() });
const LimitWindow = Type.Object({ limit: Type.Integer(), remaining: Type.Integer(), reset: Type.Integer() });
const BillingSubscription = Type.Object({
  object: Type.Literal('billing.subscription'),
  account_id: Type.String(),
  tier: Type.Object({
    name: Type.String(),
    subscription_required: Type.Boolean(),
    price_month: Type.Number(),
    credits_month: Type.Number(),
    models: Type.Array(Type.String()),
  }),
  subscription: Type.Object({
    status: Type.String(),
    current_period_end: Nullable(Type.String()),
    cancel_at_period_end: Type.Boolean(),
    grace_until: Nullable(Type.String()),
  }),
  balance: Amount,
  reserved: Amount,
  available: Amount,
  rate_limits: Type.Object({
    requests_per_minute: LimitWindow,
    tokens_per_minute: LimitWindow,
    concurrent_requests: Type.Object({ limit: Type.Integer(), in_use: Type.Integer() }),
  }),
});

export function billingSubscriptionRoute(app: TypeBoxFastify, services: AppServices): void {
  app.get('/api/billing/subscription', { schema: { response: { 200: BillingSubscription } } }, async (request, reply) => {
    const { key, account } = await services.authenticator.authenticate(request.headers.authorization);
    assertKeyNotExpired(key);
    assertKeyAllowsIp(key, request);
    if (account.status !== 'active') throw new ForbiddenError('account_suspended');
    const tier = services.tiers.of(account);
    const limits = await services.admission.limits({ accountId: account.id, tier });
    reply.headers(rateLimitHeaders(limits.requests));
    const { balanceMicros, reservedMicros, availableMicros } = await services.balances.of(account.id);

    return {
      object: 'billing.subscription' as const,
      account_id: account.id,
      tier: {
        name: tier.name,
        subscription_required: tier.config.subscription,
        price_month: tier.config.price_month,
        credits_month: tier.config.credits_month,
        models: tier.config.models,
      },
      subscription: {
        status: tier.config.subscription ? account.subscriptionStatus : 'not_required',
        current_period_end: account.subscriptionPeriodEnd,
        cancel_at_period_end: account.cancelAtPeriodEnd,
        grace_until: account.subscriptionGraceUntil,
      },
      balance: amount(balanceMicros),
      reserved: amount(reservedMicros),
      available: amount(availableMicros),
      rate_limits: {
        requests_per_minute: { limit: limits.requests.limit, remaining: limits.requests.remaining, reset: limits.requests.resetAtUnixSec },
        tokens_per_minute: { limit: limits.tokens.limit, remaining: limits.tokens.remaining, reset: limits.tokens.resetAtUnixSec },
        concurrent_requests: { limit: limits.concurrency.limit, in_use: limits.concurrency.inUse },
      },
    };
  });
}

function amount(micros: number): Static<typeof Amount> {
  return { credits: micros / MICROS_PER_CREDIT, micros };
}
