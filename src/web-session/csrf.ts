// Cross-site request defences for the dashboard's state-changing calls: the Origin check
// (covers sign-in and sign-up, which have no session yet) and the session's CSRF token,
// which a page on another site cannot read and so cannot send.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Session } from '../store/store.js';
import { Refusal } from '../errors.js';

export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(request: FastifyRequest): boolean {
  return !SAFE_METHODS.has(request.method);
}

/** An Origin, when a browser sent one, must name the host the request was sent to. */
export function assertSameOrigin(request: FastifyRequest): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let originHost: string | undefined;
  try {
    originHost = new URL(origin).host;
  } catch {
    // "null" (sandboxed frames, some redirects) or garbage: not this site.
  }
  if (originHost === undefined || originHost.toLowerCase() !== request.host.toLowerCase()) {
    throw new Refusal('cross_origin');
  }
}

export function assertCsrfToken(request: FastifyRequest, session: Session): void {
  const sent = request.headers[CSRF_HEADER];
  const expected = Buffer.from(session.csrfToken);
  const actual = Buffer.from(typeof sent === 'string' ? sent : '');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) {
    throw new Refusal('csrf_invalid');
  }
}
