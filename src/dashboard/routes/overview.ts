// The account at a glance, and the models its tier may use.
import { Type } from '@sinclair/typebox';
import { MICROS_PER_CREDIT } from '../../money.js';
import { UNIT_MULTIPLIER_PPM } from '../../billing/pricing.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { signedIn, type DashboardServices } from '../context.js';
import { AccountView, PlanView, StandingView, accountView, baseUrls, planView, standingView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';
import type * as Json from '../api-types.js';

const Overview = Type.Object({
  account: AccountView,
  standing: StandingView,
  balanceMicros: Type.Integer(),
  reservedMicros: Type.Integer(),
  plan: PlanView,
  baseUrls: Type.Array(Type.String()),
});
export type Overview = JsonOf<typeof Overview, Json.Overview>;
const Models = Type.Object({
  models: Type.Array(
    Type.Object({
      id: Type.String(),
      description: Nullable(Type.String()),
      ownedBy: Type.String(),
      context: Type.Integer(),
      maxOutput: Type.Integer(),
      /** Which of chat, responses, completions and embeddings it serves. */
      endpoints: Type.Array(Type.String()),
      /** Credits per million tokens of each kind, as this account pays them (its tier's and its own multipliers applied). */
      price: Type.Object({
        inputPerMillion: Type.Number(),
        cachedInputPerMillion: Type.Number(),
        cacheWritePerMillion: Type.Number(),
        cacheWrite1hPerMillion: Type.Number(),
        outputPerMillion: Type.Number(),
        reasoningPerMillion: Type.Number(),
      }),
    }),
  ),
});
export type Models = JsonOf<typeof Models, Json.ModelList>;

export function overviewRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { config, tiers, balances, catalog } = services;

  dashboard.get('/overview', { schema: { response: { 200: Overview } } }, async (request) => {
    const { account } = signedIn(request);
    const tier = tiers.of(account);
    const { balanceMicros, reservedMicros } = await balances.of(account.id);
    return { account: accountView(account), standing: standingView(account, tier), balanceMicros, reservedMicros, plan: planView(tier, tier, catalog.ids, config), baseUrls: baseUrls(request, config) };
  });

  dashboard.get('/models', { schema: { response: { 200: Models } } }, async (request) => {
    const { account } = signedIn(request);
    const tier = tiers.of(account);
    // For people: the unit price scaled, as a decimal (a charge is computed exactly, in pricing.ts).
    const scale = (tier.multiplierPpm / UNIT_MULTIPLIER_PPM) * (account.priceMultiplierPpm / UNIT_MULTIPLIER_PPM);
    const perMillion = (micros: number): number => Math.round((micros * scale) / MICROS_PER_CREDIT * 1e6) / 1e6;
    return {
      models: catalog
        .list()
        .filter((model) => tier.allowsModel(model.id))
        .map((model) => ({
          id: model.id,
          description: model.description ?? null,
          ownedBy: model.ownedBy,
          context: model.contextTokens,
          maxOutput: model.maxOutputTokens,
          endpoints: [...model.endpoints],
          price: {
            inputPerMillion: perMillion(model.inputPerMTokMicros),
            cachedInputPerMillion: perMillion(model.cachedInputPerMTokMicros),
            cacheWritePerMillion: perMillion(model.cacheWritePerMTokMicros),
            cacheWrite1hPerMillion: perMillion(model.cacheWrite1hPerMTokMicros),
            outputPerMillion: perMillion(model.outputPerMTokMicros),
            reasoningPerMillion: perMillion(model.reasoningPerMTokMicros),
          },
        })),
    };
  });
}
