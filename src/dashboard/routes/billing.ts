// Plans (self-service only for plans without a subscription), the ledger, and redeeming
// the operator's codes.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { canonicalRedemptionCode, hashRedemptionCode } from '../../billing/redemption-code.js';
import { parseInput } from '../body.js';
import { Refusal } from '../../errors.js';
import { signedIn, type DashboardServices } from '../context.js';
import { accountView, planView } from '../views.js';

const planBody = z.object({ tier: z.string().min(1).max(100) });
const ledgerQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });
const redeemBody = z.object({ code: z.string().trim().min(1, 'Enter a code.').max(100) });

export function billingRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { store, tiers, keyCache, gate } = services;
  const { redeemPerAccount } = services.throttles;

  dashboard.get('/plans', async (request) => {
    const { account } = signedIn(request);
    const current = tiers.of(account);
    return { current: current.name, subscriptionStatus: account.subscriptionStatus, plans: tiers.list().map((tier) => planView(tier, current)) };
  });

  dashboard.post('/plan', async (request) => {
    const { account } = signedIn(request);
    const { tier: name } = parseInput(planBody, request.body);
    const tier = tiers.list().find((candidate) => candidate.name === name);
    if (!tier) throw new Refusal('unknown_plan');
    if (tier.config.subscription) {
      throw new Refusal('plan_needs_operator');
    }
    const updated = await store.setAccountTier(account.id, tier.name);
    // The API's cached account (and so its tier and limits) changes now in this process;
    // other instances follow the change event.
    keyCache.forgetAccount(account.id);
    return { account: accountView(updated) };
  });

  dashboard.get('/ledger', async (request) => {
    const { account } = signedIn(request);
    const { limit } = parseInput(ledgerQuery, request.query);
    const [entries, balanceMicros] = await Promise.all([store.listLedger(account.id, { limit }), store.balanceOf(account.id)]);
    return {
      balanceMicros,
      entries: entries.map((entry) => ({ id: entry.id, kind: entry.kind, amountMicros: entry.amountMicros, reason: entry.reason, createdAt: entry.createdAt })),
    };
  });

  dashboard.post('/redeem', async (request) => {
    const { account } = signedIn(request);
    const { code } = parseInput(redeemBody, request.body);
    redeemPerAccount.assertAllowed(account.id);
    const canonical = canonicalRedemptionCode(code);
    const result = canonical
      ? await store.redeemCode(account.id, hashRedemptionCode(canonical), new Date().toISOString())
      : ({ outcome: 'unknown' } as const);
    if (result.outcome !== 'redeemed') {
      redeemPerAccount.recordFailure(account.id);
      if (result.outcome === 'expired') throw new Refusal('code_expired');
      if (result.outcome === 'already_redeemed') throw new Refusal('code_redeemed');
      throw new Refusal('code_unknown');
    }
    // The API spends from the gate's balance: it is read again now, as the change feed
    // makes every other instance do.
    await gate.balanceChanged(account.id);
    return { creditedMicros: result.amountMicros, balanceMicros: result.balanceMicros };
  });
}
