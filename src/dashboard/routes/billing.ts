// Plans (self-service only for plans without a subscription), the ledger, and redeeming
// the operator's codes.
import { Type } from '@sinclair/typebox';
import { Refusal } from '../../errors.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { signedIn, type DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../input-validator.js';
import { AccountView, PlanView, accountView, planView } from '../views.js';

const PlanBody = Type.Object({ tier: Type.String({ minLength: 1, maxLength: 100 }) });
const LedgerQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) });
const RedeemBody = Type.Object({
  code: Type.String({ [TRIM]: true, minLength: 1, maxLength: 100, [MESSAGES]: { minLength: 'Enter a code.' } }),
});

const Plans = Type.Object({ current: Type.String(), subscriptionStatus: Type.String(), plans: Type.Array(PlanView) });
const PlanChanged = Type.Object({ account: AccountView });
const Ledger = Type.Object({
  balanceMicros: Type.Integer(),
  entries: Type.Array(
    Type.Object({
      id: Type.Integer(),
      kind: Type.String(),
      amountMicros: Type.Integer(),
      reason: Nullable(Type.String()),
      createdAt: Type.String(),
    }),
  ),
});
const Redeemed = Type.Object({ creditedMicros: Type.Integer(), balanceMicros: Type.Integer() });

export function billingRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, tiers, commands } = services;
  const { redeemPerAccount } = services.throttles;

  dashboard.get('/plans', { schema: { response: { 200: Plans } } }, async (request) => {
    const { account } = signedIn(request);
    const current = tiers.of(account);
    return { current: current.name, subscriptionStatus: account.subscriptionStatus, plans: tiers.list().map((tier) => planView(tier, current, services.catalog.ids, services.config)) };
  });

  dashboard.post('/plan', { schema: { body: PlanBody, response: { 200: PlanChanged } } }, async (request) => {
    const { account } = signedIn(request);
    const { tier: name } = request.body;
    const tier = tiers.list().find((candidate) => candidate.name === name);
    if (!tier) throw new Refusal('unknown_plan');
    if (tier.config.subscription) {
      throw new Refusal('plan_needs_operator');
    }
    const updated = await commands.setTier(account.id, tier.name);
    return { account: accountView(updated) };
  });

  dashboard.get('/ledger', { schema: { querystring: LedgerQuery, response: { 200: Ledger } } }, async (request) => {
    const { account } = signedIn(request);
    const { limit } = request.query;
    const [entries, balanceMicros] = await Promise.all([store.listLedger(account.id, { limit }), store.balanceOf(account.id)]);
    return {
      balanceMicros,
      entries: entries.map((entry) => ({ id: entry.id, kind: entry.kind, amountMicros: entry.amountMicros, reason: entry.reason, createdAt: entry.createdAt })),
    };
  });

  dashboard.post('/redeem', { schema: { body: RedeemBody, response: { 200: Redeemed } } }, async (request) => {
    const { account } = signedIn(request);
    const { code } = request.body;
    await redeemPerAccount.assertAllowed(account.id);
    let result;
    try {
      result = await commands.redeemCode(account.id, code);
    } catch (err) {
      if (err instanceof Refusal) await redeemPerAccount.recordFailure(account.id);
      throw err;
    }
    return { creditedMicros: result.amountMicros, balanceMicros: result.balanceMicros };
  });
}
