// The admin API under /api/admin/v1: JSON for scripts and the operator console, every write
// through Commands (audited, caches refreshed, other instances told). Its hooks, cookie
// parsing, validator and OpenAPI document live in this plugin's own scope.
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { FastifyPluginAsync } from 'fastify';
import { compileInputSchema } from '../validation/input-validator.js';
import { missError, useErrorSurface } from '../http/error-handler.js';
import type { TypeBoxTypeProvider } from '../http/typebox.js';
import type { Metrics } from '../observability/metrics.js';
import type { AppServices } from '../services.js';
import type { AdminCallerLookup } from '../store/queries.js';
import { assertScope, identifyCaller } from './caller.js';
import type { AdminServices } from './context.js';
import { OPENAPI_OPTIONS } from './openapi.js';
import { accountRoutes } from './routes/accounts.js';
import { alertRoutes } from './routes/alerts.js';
import { codeRoutes } from './routes/codes.js';
import { creditRoutes } from './routes/credits.js';
import { keyRoutes } from './routes/keys.js';
import { orgRoutes } from './routes/orgs.js';
import { reportRoutes } from './routes/reports.js';
import { requestLogRoutes } from './routes/requests.js';

/** `callers` finds who calls: admin keys (stamped when used) and operators' sessions. */
export function adminRoutes(services: AppServices, metrics: Metrics, callers: AdminCallerLookup): FastifyPluginAsync {
  return async (admin) => {
    const context: AdminServices = { ...services, metrics };
    await admin.register(cookie);
    await admin.register(swagger, OPENAPI_OPTIONS);
    admin.decorateRequest('adminCaller', null);

    // JSON only (no text/plain, so no form post from another site gets parsed); a
    // body-less POST that still says application/json is an empty call.
    const parseJson = admin.getDefaultJsonParser('error', 'error');
    admin.removeAllContentTypeParsers();
    admin.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body.toString();
      if (text === '') return done(null, undefined);
      parseJson(request, text, done);
    });
    admin.setValidatorCompiler(compileInputSchema);
    useErrorSurface(admin, 'admin');

    // A write without a scope of its own would be open to every key: refuse to start instead.
    admin.addHook('onRoute', (route) => {
      const methods = [route.method].flat();
      if (route.config?.public || methods.every((m) => m === 'GET' || m === 'HEAD')) return;
      if (route.config?.adminScope === undefined) throw new Error(`admin route ${methods.join(',')} ${route.url} names no scope`);
    });

    admin.addHook('onRequest', async (request) => {
      if (request.is404 || request.routeOptions.config.public) return;
      const caller = await identifyCaller(request, callers, context.sessions);
      assertScope(caller, request.routeOptions.config.adminScope ?? 'read');
      request.adminCaller = caller;
    });
    admin.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      reply.header('x-content-type-options', 'nosniff');
    });

    const routes = admin.withTypeProvider<TypeBoxTypeProvider>();
    accountRoutes(routes, context);
    keyRoutes(routes, context);
    orgRoutes(routes, context);
    alertRoutes(routes, context);
    creditRoutes(routes, context);
    codeRoutes(routes, context);
    reportRoutes(routes, context);
    requestLogRoutes(routes, context);
    routes.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => admin.swagger());
    // Ahead of the web app's page catch-all: a GET that misses here is the admin API's 404.
    admin.get('/*', { config: { catchAll: true, public: true }, schema: { hide: true } }, async (request) => {
      throw missError(request);
    });
  };
}
