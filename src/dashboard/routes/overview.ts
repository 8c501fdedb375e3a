// The account at a glance, and the models its tier may use.
import { Type } from '@sinclair/typebox';
import { MICROS_PER_CREDIT } from '../../billing/money.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { signedIn, type DashboardServices } from '../context.js';
import { AccountView, PlanView, accountView, baseUrls, planView } from '../views.js';

const Overview = Type.Object({
  account: AccountView,
  balanceMicros: Type.Integer(),
  reservedMicros: Type.Integer(),
  plan: PlanView,
  baseUrls: Type.Array(Type.String()),
});
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
      // credits per million tokens
      price: Type.Object({ inputPerMillion: Type.Number(), outputPerMillion: Type.Number() }),
    }),
  ),
});

export function overviewRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { config, tiers, admission, catalog } = services;

  dashboard.get('/overview', { schema: { response: { 200: Overview } } }, async (request) => {
    const { account } = signedIn(request);
    const tier = tiers.of(account);
    // The live book: settled charges not yet written are already taken off.
    const { balanceMicros, reservedMicros } = await admission.snapshot(account.id);
    return { account: accountView(account), balanceMicros, reservedMicros, plan: planView(tier, tier, catalog.ids, config), baseUrls: baseUrls(request, config) };
  });

  dashboard.get('/models', { schema: { response: { 200: Models } } }, async (request) => {
    const tier = tiers.of(signedIn(request).account);
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
          price: { inputPerMillion: model.inputPerMTokMicros / MICROS_PER_CREDIT, outputPerMillion: model.outputPerMTokMicros / MICROS_PER_CREDIT },
        })),
    };
  });
}
