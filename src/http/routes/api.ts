// The Bearer-key API, registered once per base address (/v1, /api/v1, /v1 on the API host).
import type { FastifyPluginAsync } from 'fastify';
import type { AppServices } from '../../services.js';
import type { Principal } from '../../auth/authenticate.js';
import { assertMayUseApi, type Tier } from '../../billing/tiers.js';
import { andThen, type MaybePromise } from '../../maybe-promise.js';
import { assertJsonBounds } from '../json-bounds.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import type { TypeBoxTypeProvider } from '../typebox.js';
import { chatCompletionsRoute } from './chat-completions.js';
import { completionsRoute } from './completions.js';
import { embeddingsRoute } from './embeddings.js';
import { responsesRoute } from './responses.js';
import { modelRoutes } from './models.js';

export interface ApiPrincipal extends Principal {
  tier: Tier;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes its request per minute at admission (Admission.requestsAtAdmission). */
    admitsRequest?: boolean;
  }
  interface FastifyRequest {
    principal: ApiPrincipal | null;
    /** The JSON body as the client sent it, for upstreams (forwarded without serializing it again). */
    rawJson: string | null;
  }
}

export interface ApiRoutesOptions {
  /** Serve these routes only for this Host (the dedicated API hostname). */
  host?: string;
}

export function apiRoutes(services: AppServices): FastifyPluginAsync<ApiRoutesOptions> {
  return async (api, options) => {
    if (!api.hasRequestDecorator('principal')) api.decorateRequest('principal', null);
    if (!api.hasRequestDecorator('rawJson')) api.decorateRequest('rawJson', null);
    // Fastify's own JSON parsing (same errors, same limits), keeping the text as well.
    const parseJson = api.getDefaultJsonParser('error', 'error');
    api.removeContentTypeParser('application/json');
    api.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body.toString(); // a string already: parseAs
      try {
        assertJsonBounds(text);
      } catch (err) {
        return done(err as Error, undefined);
      }
      request.rawJson = text;
      parseJson(request, text, done);
    });
    if (options.host) {
      const host = options.host;
      api.addHook('onRoute', (route) => {
        route.constraints = { ...route.constraints, host };
      });
    }
    // Steps 1–3 for every API route, before the body is even read: who is calling, may
    // they, and is there room in their requests per minute.
    // Callback style, not async: with key and account cached the hook finishes without a
    // promise, which on this path is measurably cheaper.
    api.addHook('onRequest', (request, reply, done) => {
      // In shared mode a chat request's request per minute is taken with its admission.
      const deferRequest = services.admission.requestsAtAdmission && request.routeOptions.config.admitsRequest === true;
      const admit = (principal: ApiPrincipal): MaybePromise<void> => {
        request.principal = principal;
        if (deferRequest) return undefined;
        return andThen(services.admission.takeRequest({ accountId: principal.account.id, tier: principal.tier }), (state) => {
          reply.headers(rateLimitHeaders(state));
        });
      };
      let admitted: MaybePromise<void>;
      try {
        admitted = andThen(authenticateForApi(services, request.headers.authorization), admit);
      } catch (err) {
        return done(err as Error);
      }
      if (!(admitted instanceof Promise)) return done();
      admitted.then(
        () => done(),
        (err: unknown) => done(err as Error),
      );
    });
    chatCompletionsRoute(api, services);
    completionsRoute(api, services);
    embeddingsRoute(api, services);
    responsesRoute(api, services);
    modelRoutes(api.withTypeProvider<TypeBoxTypeProvider>(), services);
  };
}

/** Steps 1–2: the key's account, allowed to use the API under its tier. */
export function authenticateForApi(services: AppServices, authorization: string | undefined): ApiPrincipal | Promise<ApiPrincipal> {
  return andThen(services.authenticator.authenticate(authorization), (principal) => withTier(services, principal));
}

function withTier(services: AppServices, { key, account }: Principal): ApiPrincipal {
  const tier = services.tiers.of(account);
  assertMayUseApi(account, tier);
  return { key, account, tier };
}
