// Plans (self-service only for plans without a subscription), the ledger, and redeeming
// the operator's codes.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../body.js';
import { Refusal } from '../../errors.js';
import { signedIn, type DashboardServices } from '../context.js';
import { accountView, planView } from '../views.js';

const planBody = z.object({ tier: z.string().min(1).max(100) });
const ledgerQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });
const redeemBody = z.object({ code: z.string().trim().min(1, 'Enter a code.').max(100) });

export function billingRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { store, tiers, commands } = services;
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
    const updated = await commands.setTier(account.id, tier.name);
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
    let result;
    try {
      result = await commands.redeemCode(account.id, code);
    } catch (err) {
      if (err instanceof Refusal) redeemPerAccount.recordFailure(account.id);
      throw err;
    }
    return { creditedMicros: result.amountMicros, balanceMicros: result.balanceMicros };
  });
}
