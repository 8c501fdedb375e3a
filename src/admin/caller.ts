// Who calls the admin API, and what they may do. Two ways in: an admin key as Bearer
// (scopes as granted), or the dashboard session of an operator account (every scope, the
// session's CSRF token on writes, and a shorter life than a customer's session). Customer
// keys and customer sessions are authenticated, then refused (403); admin keys are a kind
// of their own that /v1 does not know (401 there).
import type { FastifyRequest } from 'fastify';
import { hashApiKey, isWellFormedApiKey } from '../auth/api-key.js';
import { parseBearer } from '../auth/bearer.js';
import { assertCsrfToken, assertSameOrigin, isStateChanging } from '../web-session/csrf.js';
import { hasOperatorSessionLapsed } from '../web-session/operator-session.js';
import { SESSION_COOKIE, type Sessions } from '../web-session/sessions.js';
import { ForbiddenError, InvalidApiKeyError, KeyRevokedError, UnauthenticatedError } from '../errors.js';
import type { AdminCallerLookup } from '../store/queries.js';
import type { Actor, AdminScope } from '../store/store.js';
import { ADMIN_SCOPES, isWellFormedAdminKey } from '../auth/admin-key.js';

export interface AdminCaller {
  actor: Actor;
  scopes: ReadonlySet<AdminScope>;
}

/** last_used_at is for people: one write per key per minute is enough. */
const TOUCH_AFTER_MS = 60 * 1000;

export async function identifyCaller(request: FastifyRequest, store: AdminCallerLookup, sessions: Sessions): Promise<AdminCaller> {
  if (request.headers.authorization !== undefined) return callerByKey(request.headers.authorization, store);
  return callerBySession(request, store, sessions);
}

/** Refuses with 403 unless the caller holds `scope`. */
export function assertScope(caller: AdminCaller, scope: AdminScope): void {
  if (!caller.scopes.has(scope)) throw new ForbiddenError('scope_missing');
}

async function callerByKey(authorization: string, store: AdminCallerLookup): Promise<AdminCaller> {
  const secret = parseBearer(authorization);
  if (isWellFormedAdminKey(secret)) {
    // Read from the store on every call: a revocation holds at once on every instance.
    const key = await store.findAdminKeyByHash(hashApiKey(secret));
    if (!key) throw new InvalidApiKeyError();
    if (key.revokedAt !== null) throw new KeyRevokedError();
    const nowMs = Date.now();
    if (key.lastUsedAt === null || nowMs - Date.parse(key.lastUsedAt) > TOUCH_AFTER_MS) {
      await store.touchAdminKey(key.id, new Date(nowMs).toISOString());
    }
    return { actor: { kind: 'admin_key', id: key.id }, scopes: new Set(key.scopes) };
  }
  if (isWellFormedApiKey(secret)) {
    const key = await store.findKeyByHash(hashApiKey(secret));
    if (!key) throw new InvalidApiKeyError();
    if (key.revokedAt !== null) throw new KeyRevokedError();
    throw new ForbiddenError('not_an_operator');
  }
  throw new InvalidApiKeyError();
}

async function callerBySession(request: FastifyRequest, store: AdminCallerLookup, sessions: Sessions): Promise<AdminCaller> {
  const session = await sessions.find(request.cookies[SESSION_COOKIE]);
  const account = session && (await store.findAccount(session.accountId));
  if (!session || !account) throw new UnauthenticatedError('no admin key or session');
  if (account.role !== 'operator') throw new ForbiddenError('not_an_operator');
  if (hasOperatorSessionLapsed(session)) {
    // Signed out everywhere this session was used, the dashboard included.
    await sessions.end(session);
    throw new UnauthenticatedError('operator session expired');
  }
  if (isStateChanging(request)) {
    assertSameOrigin(request);
    assertCsrfToken(request, session);
  }
  return { actor: { kind: 'operator', id: account.id }, scopes: new Set(ADMIN_SCOPES) };
}
