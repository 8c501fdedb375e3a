// The Bearer-key API, registered once per base address (/v1, /api/v1, /v1 on the API host).
import type { FastifyPluginAsync } from 'fastify';
import type { AppServices } from '../../app.js';
import type { Principal } from '../../auth/authenticate.js';
import { chatCompletionsRoute } from './chat-completions.js';
import { modelRoutes } from './models.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
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
    // Step 1 for every API route, before the body is even read: who is calling.
    api.addHook('onRequest', async (request) => {
      request.principal = await services.authenticator.authenticate(request.headers.authorization);
    });
    chatCompletionsRoute(api, services);
    modelRoutes(api, services);
  };
}
