// An operator's session can do more than a customer's (the admin API, the console), so it
// lasts less: 12 hours from sign-in, and 1 hour unused. The dashboard and the admin API
// both hold operator sessions to it.
import type { Session } from '../store/store.js';

const OPERATOR_SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** Sessions note being seen every 5 minutes, so an hour is measured to within that. */
const OPERATOR_SESSION_IDLE_MS = 60 * 60 * 1000;

export function hasOperatorSessionLapsed(session: Session, nowMs = Date.now()): boolean {
  return nowMs - Date.parse(session.createdAt) > OPERATOR_SESSION_MAX_MS || nowMs - Date.parse(session.lastSeenAt) > OPERATOR_SESSION_IDLE_MS;
}
