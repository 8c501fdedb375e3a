// Sign-in through the operator's identity provider (auth.oidc), beside passwords:
// `GET /sign-in/oidc` sends the browser to the provider, `GET /sign-in/oidc/callback`
// takes it back, signs it in to the person's account (found, linked or made) and lands it
// on the page it came for. Both are navigations, not fetches: every refusal lands on the
// sign-in page with a reason it puts in words, never on an error body.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SIGN_IN_PAGE_PATH, pageUrl } from '../../auth/account-links.js';
import { ConfigError, readSecretEnv } from '../../config/load.js';
import type { OidcConfig } from '../../config/auth-schema.js';
import type { TypeBoxFastify } from '../../http/typebox.js';
import { findOrCreateOidcAccount } from '../../web-session/oidc-account.js';
import { OIDC_FLOW_COOKIE, OIDC_FLOW_COOKIE_PATH, OIDC_FLOW_TTL_MS } from '../../web-session/oidc-flow-cookie.js';
import { joinOnFirstSignIn, type AddOrganisationMember } from '../../web-session/oidc-first-sign-in.js';
import { OidcSignIn, OidcSignInRefusal, type OidcRefusalReason } from '../../web-session/oidc-sign-in.js';
import type { DashboardServices } from '../context.js';
import { startSession } from '../start-session.js';

const CALLBACK_PATH = `${OIDC_FLOW_COOKIE_PATH}/callback`;

/** The provider's client secret, read from the variable the config names; missing, the app does not start. */
export function openOidcSignIn(config: OidcConfig, readSecret: (name: string) => string | undefined = readSecretEnv): OidcSignIn {
  const secret = readSecret(config.client_secret_env);
  if (!secret) throw new ConfigError([`auth.oidc.client_secret_env: ${config.client_secret_env} is not set`]);
  return new OidcSignIn(config, secret);
}

export function oidcSignInRoutes(dashboard: TypeBoxFastify, services: DashboardServices, oidc: OidcSignIn, addMember: AddOrganisationMember): void {
  const { config, sessions } = services;

  dashboard.get('/sign-in/oidc', { config: { public: true } }, async (request, reply) => {
    const next = safeNext(new URL(request.url, 'http://lmgate').searchParams.get('next'));
    let started: Awaited<ReturnType<OidcSignIn['begin']>>;
    try {
      started = await oidc.begin(redirectUri(request), next);
    } catch (err) {
      request.log.error({ err, issuer: oidc.config.issuer }, 'OpenID provider discovery failed');
      return refuse(reply, 'failed', next);
    }
    reply.setCookie(OIDC_FLOW_COOKIE, started.cookie, {
      httpOnly: true,
      // Lax: the provider's redirect back is a top-level GET from its site, which Lax lets through.
      sameSite: 'lax',
      path: OIDC_FLOW_COOKIE_PATH,
      secure: request.protocol === 'https',
      maxAge: OIDC_FLOW_TTL_MS / 1000,
    });
    return reply.redirect(started.url.href, 302);
  });

  dashboard.get('/sign-in/oidc/callback', { config: { public: true } }, async (request, reply) => {
    const flow = oidc.openFlow(request.cookies[OIDC_FLOW_COOKIE]);
    // Used once, whatever happens: a second visit to the same callback finds no flow.
    reply.clearCookie(OIDC_FLOW_COOKIE, { path: OIDC_FLOW_COOKIE_PATH });
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    try {
      const person = await oidc.finish(new URL(redirectUri(request) + query), flow);
      const { account, created } = await findOrCreateOidcAccount(services, person);
      let joined: string | undefined;
      if (created) {
        try {
          joined = await joinOnFirstSignIn(oidc.config.first_sign_in, addMember, account);
        } catch (err) {
          // The account exists and may sign in; the operator adds the member by hand.
          request.log.error({ err, account_id: account.id, org: oidc.config.first_sign_in?.org }, 'joining the organisation at first sign-in failed');
        }
      }
      // A first sign-in that joined an organisation lands in it.
      await startSession(sessions, request, reply, account, 'oidc', joined ?? null);
      return reply.redirect(flow?.next ?? '/', 302);
    } catch (err) {
      // The person sees the sign-in page with the reason in words; the operator, the cause in the log.
      if (!(err instanceof OidcSignInRefusal)) request.log.error({ err }, 'OpenID Connect sign-in failed');
      else if (err.reason === 'failed') request.log.warn({ err }, 'OpenID Connect sign-in failed');
      return refuse(reply, err instanceof OidcSignInRefusal ? err.reason : 'failed', flow?.next ?? '/');
    }
  });

  /** The callback's address as the provider must have it registered: `server.public_url`, else the address the browser used. */
  function redirectUri(request: FastifyRequest): string {
    return pageUrl(config.server.public_url ?? `${request.protocol}://${request.host}`, CALLBACK_PATH);
  }
}

function refuse(reply: FastifyReply, reason: OidcRefusalReason, next: string): FastifyReply {
  const query = new URLSearchParams({ sso_error: reason });
  if (next !== '/') query.set('next', next);
  return reply.redirect(`${SIGN_IN_PAGE_PATH}?${query}`, 302);
}

/** Only a path of this site, so a crafted link cannot send people elsewhere once signed in. */
function safeNext(next: string | null): string {
  return next !== null && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}
