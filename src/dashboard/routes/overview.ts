// The account at a glance, and the models its tier may use.
import type { FastifyInstance } from 'fastify';
import { MICROS_PER_CREDIT } from '../../billing/money.js';
import { signedIn, type DashboardServices } from '../context.js';
import { accountView, baseUrls, planView } from '../views.js';

export function overviewRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { config, tiers, admission, catalog } = services;

  dashboard.get('/overview', async (request) => {
    const { account } = signedIn(request);
    const tier = tiers.of(account);
    // The live book: settled charges not yet written are already taken off.
    const { balanceMicros, reservedMicros } = await admission.snapshot(account.id);
    return { account: accountView(account), balanceMicros, reservedMicros, plan: planView(tier, tier), baseUrls: baseUrls(request, config) };
  });

  dashboard.get('/models', async (request) => {
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
          price: { inputPerMillion: model.inputPerMTokMicros / MICROS_PER_CREDIT, outputPerMillion: model.outputPerMTokMicros / MICROS_PER_CREDIT },
        })),
    };
  });
}
