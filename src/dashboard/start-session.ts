// Signing a browser in, the one way every sign-in does it (a password, a confirmation
// link, the identity provider): the browser's previous session ends, a new one starts,
// recording how it was made, and its token goes into the HttpOnly session cookie.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthMethod } from '../store/oidc-identities.js';
import type { Account } from '../store/store.js';
import { SESSION_COOKIE, SESSION_TTL_MS, type Sessions } from '../web-session/sessions.js';
import { accountView, type SessionView } from './views.js';

/** `actFor`: the organisation the new session acts for from the start (one the person has just joined). */
export async function startSession(
  sessions: Sessions,
  request: FastifyRequest,
  reply: FastifyReply,
  account: Account,
  authMethod: AuthMethod = 'password',
  actFor: string | null = null,
): Promise<SessionView> {
  // A browser holds one session: the one its cookie named ends with this sign-in.
  const previous = await sessions.find(request.cookies[SESSION_COOKIE]);
  if (previous) await sessions.end(previous);
  const { token, session } = await sessions.start(account.id, authMethod);
  if (actFor !== null) await sessions.actFor(session, actFor);
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    // https when lmgate serves TLS, or when a trusted proxy says the client used it.
    secure: request.protocol === 'https',
    maxAge: SESSION_TTL_MS / 1000,
  });
  return { account: accountView(account), csrfToken: session.csrfToken };
}
