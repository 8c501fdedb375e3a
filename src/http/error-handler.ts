// Wires every failure into error-reply.ts: thrown errors, unknown paths, and known paths
// asked with the wrong method (405 with Allow, from the table of registered routes).
import FindMyWay from 'find-my-way';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MethodNotAllowedError, RouteNotFoundError } from '../errors.js';
import { isExpectedError, renderError, type ErrorReply } from './error-reply.js';

/** The methods lmgate serves on some path. */
export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

export function installErrorHandling(app: FastifyInstance): void {
  // A shadow router holding every path with its methods, only consulted on a miss.
  const routeTable = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!routeTable.hasRoute(method as 'GET', route.url)) routeTable.on(method as 'GET', route.url, () => undefined);
    }
  });

  app.setErrorHandler((err, request, reply) => {
    if (!isExpectedError(err)) request.log.error({ err, request_id: request.id }, 'unexpected error');
    if ((err as { code?: unknown }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Fastify closes the connection after a body it did not read in full. Closing a socket
      // with unread bytes resets it, and the reset can destroy the 413 before the client
      // reads it; keeping the connection lets Node read the rest and discard it instead.
      reply.removeHeader('connection');
    }
    send(reply, renderError(err, request.id));
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allow = HTTP_METHODS.filter((method) => routeTable.find(method as 'GET', path) !== null);
    const err = allow.length > 0 ? new MethodNotAllowedError(allow) : new RouteNotFoundError(path);
    send(reply, renderError(err, request.id));
  });
}

function send(reply: FastifyReply, rendered: ErrorReply): void {
  reply.code(rendered.status).headers(rendered.headers).send(rendered.body);
}
