// The dashboard's JSON API under /api/dashboard/, authenticated by a session cookie. Its
// hooks, cookie parsing and error renderer live in this plugin's own scope, so the
// Bearer-key API's hot path pays nothing for them.
import cookie from '@fastify/cookie';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AppServices } from '../services.js';
import { UnauthenticatedError, UnsupportedMediaTypeError } from '../errors.js';
import { missError, useErrorSurface } from '../http/error-handler.js';
import { actingFor, type DashboardServices } from './context.js';
import { assertCsrfToken, assertSameOrigin, isStateChanging } from '../web-session/csrf.js';
import type { TypeBoxTypeProvider } from '../http/typebox.js';
import { compileInputSchema } from '../validation/input-validator.js';
import { hasOperatorSessionLapsed } from '../web-session/operator-session.js';
import { alertRoutes } from './routes/alerts.js';
import { billingRoutes } from './routes/billing.js';
import { keyRoutes } from './routes/keys.js';
import { orgRoutes } from './routes/orgs.js';
import { invitationRoutes } from './routes/invitations.js';
import { overviewRoutes } from './routes/overview.js';
import { passwordResetRoutes } from './routes/password-reset.js';
import { paymentRoutes } from './routes/payments.js';
import { signInRoutes } from './routes/sign-in.js';
import { oidcSignInRoutes, openOidcSignIn } from './routes/oidc-sign-in.js';
import { addMemberThroughOrgs } from '../web-session/oidc-first-sign-in.js';
import { requestLogRoutes } from './routes/requests.js';
import { usageRoutes } from './routes/usage.js';
import { webhookRoutes } from './routes/webhooks.js';
import { SESSION_COOKIE } from '../web-session/sessions.js';
import { createDashboardThrottles } from '../web-session/sign-in-throttle.js';

export function dashboardRoutes(services: AppServices): FastifyPluginAsync {
  return async (dashboard) => {
    const context: DashboardServices = { ...services, throttles: createDashboardThrottles(services.config.signup.per_address_per_hour, services.failureThrottle) };
    await dashboard.register(cookie);
    dashboard.decorateRequest('signedIn', null);
    // A body-less POST or DELETE that still says application/json (as fetch wrappers
    // often do) is an empty call, not malformed JSON.
    const parseJson = dashboard.getDefaultJsonParser('error', 'error');
    dashboard.removeContentTypeParser('application/json');
    dashboard.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body.toString();
      if (text === '') return done(null, undefined);
      parseJson(request, text, done);
    });

    // Bodies, query strings and path parameters are checked against their routes' schemas
    // here, and refused as a ValidationError (422) that the error handler renders.
    dashboard.setValidatorCompiler(compileInputSchema);

    // Errors in the dashboard's words: its 404 is "Not found." (the API's says "Model not
    // found."), and its 422 lists one entry per field for the forms.
    useErrorSurface(dashboard, 'dashboard');

    // Before the body is read: where the call comes from, what it sends, and who makes it.
    dashboard.addHook('onRequest', async (request) => {
      if (request.is404) return;
      const changesState = isStateChanging(request);
      if (changesState) {
        assertSameOrigin(request);
        assertJsonBody(request);
      }
      if (request.routeOptions.config.public) return;
      const session = await context.sessions.find(request.cookies[SESSION_COOKIE]);
      const person = session && (await services.store.findAccount(session.accountId));
      if (!session || !person) throw new UnauthenticatedError('no dashboard session');
      if (person.role === 'operator' && hasOperatorSessionLapsed(session)) {
        await context.sessions.end(session);
        throw new UnauthenticatedError('operator session lapsed');
      }
      if (changesState) assertCsrfToken(request, session);
      request.signedIn = { session, person, ...(await actingFor(services.store, session, person)) };
    });

    // Account data must not be kept by shared caches or the browser's back-forward cache,
    // and a JSON answer must never be sniffed into something a browser would run.
    dashboard.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      reply.header('x-content-type-options', 'nosniff');
    });

    const routes = dashboard.withTypeProvider<TypeBoxTypeProvider>();
    signInRoutes(routes, context);
    if (services.config.auth.oidc) oidcSignInRoutes(routes, context, openOidcSignIn(services.config.auth.oidc), addMemberThroughOrgs(services.store, services.commands.orgs));
    passwordResetRoutes(routes, context);
    overviewRoutes(routes, context);
    keyRoutes(routes, context);
    orgRoutes(routes, context);
    invitationRoutes(routes, context);
    usageRoutes(routes, context);
    requestLogRoutes(routes, context);
    billingRoutes(routes, context);
    paymentRoutes(routes, context);
    webhookRoutes(routes, context);
    alertRoutes(routes, context);
    // Ahead of the web app's page catch-all: a GET that misses here is the dashboard's 404.
    dashboard.get('/*', { config: { catchAll: true, public: true } }, async (request) => {
      throw missError(request);
    });
  };
}

/** A body must be JSON: a form post from another site (text/plain, urlencoded) is refused. */
function assertJsonBody(request: FastifyRequest): void {
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  if (!hasBody) return;
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new UnsupportedMediaTypeError(type);
}
