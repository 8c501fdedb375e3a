// Wires every failure into error-reply.ts: thrown errors, unknown paths, and known paths
// asked with the wrong method (405 with Allow, from one table of registered routes). A
// plugin scope with another surface (the dashboard) installs the same handlers with its own.
import FindMyWay from 'find-my-way';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientGoneError, MethodNotAllowedError, RouteNotFoundError } from '../errors.js';
import { knownError, logLevelOf, reasonOf, renderError, type ErrorReply, type Surface } from './error-reply.js';

/** The methods lmgate serves on some path. */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods some route answers on `path`, for 405's Allow. */
    allowedMethods(path: string): string[];
    failureObserver: FailureObserver;
  }
  interface FastifyRequest {
    /** Why this request failed (error-reply.ts reasonOf), once the error handler has seen it. */
    failure: string | null;
  }
  interface FastifyContextConfig {
    /** A route that answers for paths nothing else serves; it never counts for 405's Allow. */
    catchAll?: boolean;
  }
}

/** What the error handlers tell the metrics. */
export interface FailureObserver {
  /** A client closed the connection while its request was being read. */
  clientGone(): void;
}

/** On the root instance, before any route is registered. */
export function installErrorHandling(app: FastifyInstance, observer: FailureObserver): void {
  // A shadow router holding every path with its methods, only consulted on a miss.
  const routeTable = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    if (route.config?.catchAll) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!routeTable.hasRoute(method as 'GET', route.url)) routeTable.on(method as 'GET', route.url, () => undefined);
    }
  });
  app.decorateRequest('failure', null);
  app.decorate('failureObserver', observer);
  app.decorate('allowedMethods', (path: string) => HTTP_METHODS.filter((method) => routeTable.find(method as 'GET', path) !== null));
  useErrorSurface(app, 'api');
}

/** The error and not-found handlers of `scope`, rendering for `surface`. */
export function useErrorSurface(scope: FastifyInstance, surface: Surface): void {
  scope.setErrorHandler((err: FastifyError, request, reply) => {
    if (knownError(err) instanceof ClientGoneError) request.server.failureObserver.clientGone();
    logFailure(request, err);
    request.failure = reasonOf(err);
    keepConnectionAfterUnreadBody(err, reply);
    send(reply, renderError(err, request.id, surface));
  });
  scope.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    send(reply, renderError(missError(request), request.id, surface));
  });
}

/**
 * Fastify closes the connection after a body it did not read in full. Closing a socket
 * with unread bytes resets it, and the reset can destroy the 413 before the client reads
 * it; keeping the connection lets Node read the rest and discard it instead.
 */
export function keepConnectionAfterUnreadBody(err: FastifyError, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') reply.removeHeader('connection');
}

/** What a request that no route serves gets: 405 when the path has other methods, else 404. */
export function missError(request: FastifyRequest): MethodNotAllowedError | RouteNotFoundError {
  const path = request.url.split('?')[0] ?? '/';
  const allow = request.server.allowedMethods(path);
  return allow.length > 0 ? new MethodNotAllowedError(allow) : new RouteNotFoundError(path);
}

/** Unexpected errors at error level; others as their row says (a client gone at debug). */
export function logFailure(request: FastifyRequest, err: unknown): void {
  const level = logLevelOf(err);
  if (level) request.log[level]({ err, request_id: request.id }, level === 'error' ? 'unexpected error' : (err as Error).message);
}

function send(reply: FastifyReply, rendered: ErrorReply): void {
  reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
}
