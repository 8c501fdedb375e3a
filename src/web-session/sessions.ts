// Dashboard sessions, held server-side (DESIGN: revocable). The browser holds a random
// 32-byte token in the `lmgate_session` cookie; the store holds its SHA-256, the account
// and the session's CSRF token. Deleting the row signs the browser out.
import { createHash, randomBytes } from 'node:crypto';
import type { SessionStore } from '../store/queries.js';
import type { Session } from '../store/store.js';
import type { AuthMethod } from '../store/oidc-identities.js';

export const SESSION_COOKIE = 'lmgate_session';
export const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** last_seen_at is a hint for people, not security: one write per session per few minutes. */
const TOUCH_AFTER_MS = 5 * 60 * 1000;

export interface StartedSession {
  /** The cookie's value; exists only in the response that sets it. */
  token: string;
  session: Session;
}

export class Sessions {
  constructor(private readonly store: SessionStore) {}

  /** `authMethod` records how the person proved who they are (an organisation may require 'oidc'). */
  async start(accountId: string, authMethod: AuthMethod = 'password'): Promise<StartedSession> {
    const nowMs = Date.now();
    // Expired rows are pruned lazily: a sign-in is rare enough to pay for one indexed delete.
    await this.store.deleteExpiredSessions(new Date(nowMs).toISOString());
    const token = randomBytes(32).toString('base64url');
    const session: Session = {
      tokenHash: hashSessionToken(token),
      accountId,
      csrfToken: randomBytes(32).toString('base64url'),
      createdAt: new Date(nowMs).toISOString(),
      expiresAt: new Date(nowMs + SESSION_TTL_MS).toISOString(),
      lastSeenAt: new Date(nowMs).toISOString(),
      authMethod,
      orgId: null,
    };
    await this.store.createSession(session);
    return { token, session };
  }

  /** The live session for a cookie's token; an expired one is deleted and not returned. */
  async find(token: string | undefined): Promise<Session | undefined> {
    if (!token) return undefined;
    const session = await this.store.findSession(hashSessionToken(token));
    if (!session) return undefined;
    const nowMs = Date.now();
    if (Date.parse(session.expiresAt) <= nowMs) {
      await this.store.deleteSession(session.tokenHash);
      return undefined;
    }
    if (nowMs - Date.parse(session.lastSeenAt) > TOUCH_AFTER_MS) {
      await this.store.touchSession(session.tokenHash, new Date(nowMs).toISOString());
    }
    return session;
  }

  /** From now on the session acts for the organisation (null: the person's own account); membership is the caller's to check. */
  actFor(session: Session, orgId: string | null): Promise<void> {
    return this.store.setSessionOrg(session.tokenHash, orgId);
  }

  end(session: Session): Promise<void> {
    return this.store.deleteSession(session.tokenHash);
  }

  /** After a password change: every other browser signed in to the account is signed out. */
  endOthers(session: Session): Promise<void> {
    return this.store.deleteOtherSessions(session.accountId, session.tokenHash);
  }

  /** After an operator set the password: every browser signed in to the account is signed out. */
  endAll(accountId: string): Promise<void> {
    return this.store.deleteOtherSessions(accountId, '');
  }
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
