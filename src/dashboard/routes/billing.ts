// Plans (self-service only for plans without a subscription), the ledger, and redeeming
// the operator's codes.
import { Type, type Static } from '@sinclair/typebox';
import { Refusal } from '../../errors.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { requirePermission, signedIn, type DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { AccountView, PlanView, StandingView, accountView, planView, standingView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';

const PlanBody = Type.Object({ tier: Type.String({ minLength: 1, maxLength: 100 }) });
const LedgerQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) });
const HistoryQuery = Type.Object({
  /** The `next` of the page before. */
  before: Type.Optional(Type.Integer({ minimum: 1 })),
  limit: Type.Integer({ minimum: 1, maximum: 1_000, default: 500 }),
});
const History = Type.Object({
  entries: Type.Array(
    Type.Object({
      /** The entry's id; for a day's usage, the newest of its entries. */
      id: Type.Integer(),
      kind: Type.String(),
      amountMicros: Type.Integer(),
      reason: Nullable(Type.String()),
      createdAt: Type.String(),
      /** A day's usage: how many charges it sums (UTC day `day`). */
      charges: Type.Optional(Type.Integer()),
      day: Type.Optional(Type.String()),
    }),
  ),
  /** Where the next page starts; null on the last. */
  next: Nullable(Type.Integer()),
});
export type History = JsonOf<typeof History, Json.History>;
const RedeemBody = Type.Object({
  code: Type.String({ [TRIM]: true, minLength: 1, maxLength: 100, [MESSAGES]: { minLength: 'Enter a code.' } }),
});

const Plans = Type.Object({ current: Type.String(), standing: StandingView, subscriptionStatus: Type.String(), plans: Type.Array(PlanView) });
export type Plans = JsonOf<typeof Plans, Json.Plans>;
const PlanChanged = Type.Object({ account: AccountView });
export type PlanChanged = JsonOf<typeof PlanChanged, Json.PlanChanged>;
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
export type Ledger = JsonOf<typeof Ledger, Json.Ledger>;
const Redeemed = Type.Object({ creditedMicros: Type.Integer(), balanceMicros: Type.Integer() });
export type Redeemed = JsonOf<typeof Redeemed, Json.Redeemed>;

export function billingRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, tiers, commands, balances } = services;
  const { redeemPerAccount } = services.throttles;

  dashboard.get('/plans', { schema: { response: { 200: Plans } } }, async (request) => {
    const { account } = signedIn(request);
    const current = tiers.of(account);
    return { current: current.name, standing: standingView(account, current), subscriptionStatus: account.subscriptionStatus, plans: tiers.list().map((tier) => planView(tier, current, services.catalog.ids, services.config)) };
  });

  dashboard.post('/plan', { schema: { body: PlanBody, response: { 200: PlanChanged } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    const { tier: name } = request.body;
    const tier = tiers.list().find((candidate) => candidate.name === name);
    if (!tier) throw new Refusal('unknown_plan');
    if (tier.config.subscription) {
      throw new Refusal('plan_needs_operator');
    }
    const updated = await commands.accounts.setTier(account.id, tier.name);
    return { account: accountView(updated) };
  });

  dashboard.get('/ledger', { schema: { querystring: LedgerQuery, response: { 200: Ledger } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    const { limit } = request.query;
    const [entries, { balanceMicros }] = await Promise.all([store.listLedger(account.id, { limit }), balances.of(account.id)]);
    return {
      balanceMicros,
      entries: entries.map((entry) => ({ id: entry.id, kind: entry.kind, amountMicros: entry.amountMicros, reason: entry.reason, createdAt: entry.createdAt })),
    };
  });

  // The balance's history with one line per UTC day of usage (a request is one usage
  // entry each), a page of ledger entries at a time. A day cut by a page boundary goes on
  // in the next page, where the app adds it to the same line.
  dashboard.get('/history', { schema: { querystring: HistoryQuery, response: { 200: History } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    const { before, limit } = request.query;
    const page = await store.listLedger(account.id, { limit: limit + 1, ...(before === undefined ? {} : { beforeId: before }) });
    const rows = page.slice(0, limit);
    const entries: Static<typeof History>['entries'] = [];
    for (const entry of rows) {
      const last = entries.at(-1);
      const day = entry.createdAt.slice(0, 10);
      if (entry.kind === 'usage' && last?.day === day) {
        last.amountMicros += entry.amountMicros;
        last.charges! += 1;
      } else if (entry.kind === 'usage') {
        entries.push({ id: entry.id, kind: 'usage', amountMicros: entry.amountMicros, reason: null, createdAt: entry.createdAt, charges: 1, day });
      } else {
        entries.push({ id: entry.id, kind: entry.kind, amountMicros: entry.amountMicros, reason: entry.reason, createdAt: entry.createdAt });
      }
    }
    return { entries, next: page.length > limit ? rows.at(-1)!.id : null };
  });

  dashboard.post('/redeem', { schema: { body: RedeemBody, response: { 200: Redeemed } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    const { code } = request.body;
    await redeemPerAccount.assertAllowed(account.id);
    let result;
    try {
      result = await commands.credits.redeemCode(account.id, code);
    } catch (err) {
      if (err instanceof Refusal) await redeemPerAccount.recordFailure(account.id);
      throw err;
    }
    return { creditedMicros: result.amountMicros, balanceMicros: result.balanceMicros };
  });
}
