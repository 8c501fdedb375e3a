// The dashboard's web app (web/, built by Vite into web/dist): its hashed assets under
// /assets/ and index.html for each of its pages, which the browser then routes itself. A
// browser that navigates to any other page address gets index.html with status 404, and
// the app shows its not-found page; everything else that misses (API paths, assets,
// programs) keeps lmgate's 404 or 405 body. Helmet's headers and the strict CSP are
// registered in this plugin's scope only, so /v1 never pays for them.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyHelmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { missError } from '../error-handler.js';

/** The app's client-side routes (web/src/App.tsx). */
export const WEB_APP_PAGES = ['/', '/signin', '/signup', '/forgot-password', '/reset-password', '/confirm-email', '/keys', '/usage', '/requests', '/models', '/billing/plans', '/settings', '/admin', '/admin/accounts', '/admin/codes', '/admin/catalog', '/admin/audit'] as const;
/** Pages with a parameter (the console's account page, an invitation's link). */
const WEB_APP_PAGE_PATTERNS = ['/admin/accounts/:id', '/invite/:token'] as const;

// src/http/routes and dist/http/routes are both three levels below the project root.
const BUILT_APP_DIR = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const NOT_BUILT = 'The dashboard has not been built. Run `npm run build`, then restart lmgate.\n';

// Vite's build needs no inline script or style, so nothing but our own origin is allowed.
const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'frame-ancestors': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'object-src': ["'none'"],
};

export interface WebAppOptions {
  /** Where the built app is; web/dist by default. */
  distDir?: string;
  /** The dedicated API hostname (server.api_host): only the API lives there. */
  apiHost?: string;
}

/** Paths that are never pages of the app: a miss there is an API or file miss. */
const NOT_PAGES = /^\/(v1|api|assets|metrics|healthz|readyz)(\/|$)/;

/** A browser loading a page (not a program, not a script or image the page asked for). */
function isPageNavigation(request: FastifyRequest, apiHost: string | undefined): boolean {
  if (apiHost !== undefined && request.hostname === apiHost) return false;
  return !NOT_PAGES.test(request.url) && (request.headers.accept ?? '').includes('text/html');
}

export const webAppRoutes: FastifyPluginAsync<WebAppOptions> = async (app, options) => {
  const distDir = options.distDir ?? BUILT_APP_DIR;
  // useDefaults off: helmet's defaults add upgrade-insecure-requests, which breaks the
  // plain-HTTP loopback setup, and looser directives than the list above.
  await app.register(fastifyHelmet, { contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY } });

  const indexFile = join(distDir, 'index.html');
  if (!existsSync(indexFile)) {
    // The API works without the dashboard; its pages say how to get it.
    for (const page of [...WEB_APP_PAGES, ...WEB_APP_PAGE_PATTERNS]) {
      app.get(page, async (_request, reply) => reply.code(503).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(NOT_BUILT));
    }
    return;
  }

  const indexHtml = readFileSync(indexFile);
  // One route per built file rather than a wildcard, so a missing asset is an honest 404
  // (the error handler's route table would call a wildcard's miss a 405).
  await app.register(fastifyStatic, {
    root: join(distDir, 'assets'),
    prefix: '/assets/',
    wildcard: false,
    index: false,
    decorateReply: false,
    // File names carry a hash of their content: a new build means new names.
    immutable: true,
    maxAge: '365d',
  });
  for (const page of [...WEB_APP_PAGES, ...WEB_APP_PAGE_PATTERNS]) {
    // no-cache: revalidate, so a new build's asset names are picked up at once.
    app.get(page, async (_request, reply) => reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml));
  }
  app.get('/*', { config: { catchAll: true } }, async (request, reply) => {
    if (!isPageNavigation(request, options.apiHost)) throw missError(request);
    const [path, query] = request.url.split(/\?(.*)/s, 2) as [string, string | undefined];
    const page = path.replace(/\/+$/, '');
    if (page !== path && (WEB_APP_PAGES as readonly string[]).includes(page)) return reply.redirect(query ? `${page}?${query}` : page, 308);
    return reply.code(404).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(indexHtml);
  });
};
