// The Bearer-key API, registered once per base address (/v1, /api/v1, /v1 on the API host).
import type { FastifyPluginAsync } from 'fastify';
import type { AppServices } from '../../app.js';
import type { Principal } from '../../auth/authenticate.js';
import { assertMayUseApi, type Tier } from '../../billing/tiers.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import { chatCompletionsRoute } from './chat-completions.js';
import { modelRoutes } from './models.js';

export interface ApiPrincipal extends Principal {
  tier: Tier;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: ApiPrincipal | null;
  }
}

export interface ApiRoutesOptions {
  /** Serve these routes only for this Host (the dedicated API hostname). */
  host?: string;
}

export function apiRoutes(services: AppServices): FastifyPluginAsync<ApiRoutesOptions> {
  return async (api, options) => {
    if (!api.hasRequestDecorator('principal')) api.decorateRequest('principal', null);
    if (options.host) {
      const host = options.host;
      api.addHook('onRoute', (route) => {
        route.constraints = { ...route.constraints, host };
      });
    }
    // Steps 1–3 for every API route, before the body is even read: who is calling, may
    // they, and is there room in their requests per minute.
    api.addHook('onRequest', async (request, reply) => {
      request.principal = await authenticateForApi(services, request.headers.authorization);
      const { account, tier } = request.principal;
      reply.headers(rateLimitHeaders(services.limits.takeRequest(account.id, tier)));
    });
    chatCompletionsRoute(api, services);
    modelRoutes(api, services);
  };
}

/** Steps 1–2: the key's account, allowed to use the API under its tier. */
export async function authenticateForApi(services: AppServices, authorization: string | undefined): Promise<ApiPrincipal> {
  const { key, account } = await services.authenticator.authenticate(authorization);
  const tier = services.tiers.of(account);
  assertMayUseApi(account, tier);
  return { key, account, tier };
}
