// The Bearer-key API, registered once per base address (/v1, /api/v1, /v1 on the API host).
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppServices } from '../../services.js';
import type { Principal } from '../../auth/authenticate.js';
import { assertKeyAllowsIp, assertKeyNotExpired } from '../../auth/key-controls.js';
import { assertMayUseApi, type Tier } from '../../billing/tiers.js';
import { andThen, type MaybePromise } from '../../maybe-promise.js';
import type { Admission } from '../../billing/admission.js';
import type { TakenRequests } from '../../limits/account-limits.js';
import { assertJsonBounds } from '../json-bounds.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import type { TypeBoxTypeProvider } from '../typebox.js';
import { chatCompletionsRoute } from '../../chat/http/chat-completions-route.js';
import { messagesRoute } from '../../anthropic/http/messages-route.js';
import { completionsRoute } from '../../completions/http/completions-route.js';
import { embeddingsRoute } from '../../embeddings/http/embeddings-route.js';
import { responsesRoute } from '../../responses/http/responses-route.js';
import { modelRoutes } from './models.js';

export interface ApiPrincipal extends Principal {
  tier: Tier;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's admission may take its request per minute (Admission.takeRequest). */
    admitsRequest?: boolean;
    /** The route also takes the key as Anthropic's clients send it, in `x-api-key`. */
    acceptsApiKeyHeader?: boolean;
  }
  interface FastifyRequest {
    principal: ApiPrincipal | null;
    /** The JSON body as the client sent it, for upstreams (forwarded without serializing it again). */
    rawJson: string | null;
    /** Past admission: its usage record tells of it, whatever its status. */
    admitted: boolean;
    /** onRequest took one of the account's requests per minute, one of the key's: given back if the request is refused. */
    tookAccountRequest: boolean;
    tookKeyRequest: boolean;
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
    if (!api.hasRequestDecorator('admitted')) api.decorateRequest('admitted', false);
    if (!api.hasRequestDecorator('tookAccountRequest')) api.decorateRequest('tookAccountRequest', false);
    if (!api.hasRequestDecorator('tookKeyRequest')) api.decorateRequest('tookKeyRequest', false);
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
      // A metered route's admission may take its request per minute in the same round trip.
      const admitsRequest = request.routeOptions.config.admitsRequest === true;
      const admit = (principal: ApiPrincipal): MaybePromise<void> => {
        // Refusals from here on reach the request log: the account is known.
        request.principal = principal;
        assertMayUseApi(principal.account, principal.tier);
        // The key's own controls, from its cached record (auth/key-controls.ts); its
        // model control waits for the body.
        const { key } = principal;
        assertKeyNotExpired(key);
        assertKeyAllowsIp(key, request);
        const takeAccountRequest = (): MaybePromise<void> =>
          andThen(services.admission.takeRequest({ accountId: principal.account.id, tier: principal.tier }, admitsRequest), (state) => {
            if (state === undefined) return;
            request.tookAccountRequest = true;
            reply.headers(rateLimitHeaders(state));
          });
        if (key.controls.rpm === null) return takeAccountRequest();
        return andThen(services.admission.takeKeyRequest(key.id, key.controls.rpm), () => {
          request.tookKeyRequest = true;
          return takeAccountRequest();
        });
      };
      let admitted: MaybePromise<void>;
      try {
        admitted = andThen(authenticateForApi(services, authorizationOf(request)), admit);
      } catch (err) {
        return done(err as Error);
      }
      if (!(admitted instanceof Promise)) return done();
      admitted.then(
        () => done(),
        (err: unknown) => done(err as Error),
      );
    });
    // After the answer is sent. A key was used when it got an answer, not a refusal; a
    // refusal of a known account goes to its request log unless a usage record already
    // tells of the request, and costs no limit (what onRequest took is given back);
    // spending may have crossed an auto-recharge threshold.
    const { lastUsed, refusals, payments, admission } = services;
    api.addHook('onResponse', (request, reply, done) => {
      const principal = request.principal;
      if (principal === null) return done();
      if (request.admitted || reply.statusCode < 400) lastUsed.touch(principal.key.id);
      else {
        refusals.add(refusalOf(request, reply.statusCode, principal));
        if (request.tookAccountRequest || request.tookKeyRequest) giveBackRequests(admission, request, principal, (err) => request.log.warn({ err }, 'giving back a refused request’s limits failed'));
      }
      payments?.autoRecharge.spent(principal.account.id);
      done();
    });
    chatCompletionsRoute(api, services);
    messagesRoute(api, services);
    completionsRoute(api, services);
    embeddingsRoute(api, services);
    responsesRoute(api, services);
    modelRoutes(api.withTypeProvider<TypeBoxTypeProvider>(), services);
  };
}

function giveBackRequests(admission: Admission, request: FastifyRequest, { account, tier, key }: ApiPrincipal, onError: (err: unknown) => void): void {
  const taken: TakenRequests = {};
  if (request.tookAccountRequest) taken.account = { accountId: account.id, tier };
  if (request.tookKeyRequest && key.controls.rpm !== null) taken.key = { id: key.id, rpm: key.controls.rpm };
  try {
    const given = admission.giveBackRequests(taken);
    if (given instanceof Promise) given.catch(onError);
  } catch (err) {
    onError(err);
  }
}

function refusalOf(request: FastifyRequest, status: number, { key, account }: ApiPrincipal) {
  const model = (request.body as { model?: unknown } | null | undefined)?.model;
  return {
    requestId: request.id,
    accountId: account.id,
    keyId: key.id,
    memberId: key.memberId,
    model: typeof model === 'string' ? model.slice(0, 200) : null,
    path: request.url.split('?')[0]!.slice(0, 200),
    status,
    reason: request.failure,
  };
}

/** The Authorization header, or on a route that takes it, `x-api-key` as a Bearer key. */
function authorizationOf(request: FastifyRequest): string | undefined {
  const apiKey = request.headers['x-api-key'];
  if (request.routeOptions.config.acceptsApiKeyHeader === true && typeof apiKey === 'string') return `Bearer ${apiKey}`;
  return request.headers.authorization;
}

/** Step 1: the key, its account and the account's tier (step 2, may it use the API, follows). */
export function authenticateForApi(services: AppServices, authorization: string | undefined): ApiPrincipal | Promise<ApiPrincipal> {
  return andThen(services.authenticator.authenticate(authorization), ({ key, account, budgets }) => ({ key, account, budgets, tier: services.tiers.of(account) }));
}
