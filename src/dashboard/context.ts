// What every dashboard route works with: the app's services plus the dashboard's own, and
// the signed-in session the plugin's hook attached to the request.
import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../services.js';
import { assertMay, mayDo, type OrgPermission } from '../auth/org-roles.js';
import { UnauthenticatedError } from '../errors.js';
import type { OrgRole } from '../store/org-store.js';
import type { StoreQueries } from '../store/queries.js';
import type { Account, Session } from '../store/store.js';
import type { DashboardThrottles } from '../web-session/sign-in-throttle.js';

export interface DashboardServices extends AppServices {
  throttles: DashboardThrottles;
}

export interface SignedIn {
  session: Session;
  /** The person signed in. */
  person: Account;
  /** The account the session acts for: an organisation the person belongs to, or their own. */
  account: Account;
  /** The person's role in `account` (their own account: owner). */
  role: OrgRole;
}

declare module 'fastify' {
  interface FastifyRequest {
    signedIn: SignedIn | null;
  }
  interface FastifyContextConfig {
    /** A dashboard route that needs no session (config, sign-up, sign-in). */
    public?: boolean;
  }
}

/** The session the plugin's hook found; only called from routes that are not public. */
export function signedIn(request: FastifyRequest): SignedIn {
  if (!request.signedIn) throw new UnauthenticatedError('no dashboard session');
  return request.signedIn;
}

/**
 * Which account a session acts for: the organisation it switched to, while the person still
 * belongs to it (read at every call, so a removal stops it at once on every instance) and
 * signed in the way it requires; else the person's own.
 */
export async function actingFor(store: Pick<StoreQueries, 'findMembership'>, session: Session, person: Account): Promise<Pick<SignedIn, 'account' | 'role'>> {
  const membership = session.orgId === null ? undefined : await store.findMembership(session.orgId, person.id);
  if (!membership || (membership.org.requireSso && session.authMethod !== 'oidc')) return { account: person, role: 'owner' };
  return { account: membership.org, role: membership.role };
}

/**
 * Whose keys and usage the caller sees in the account it acts for: a `member` of an
 * organisation only their own (the member id to filter by); everyone else all of them.
 */
export function ownOnly({ account, person, role }: SignedIn, permission: 'keys' | 'usage'): string | undefined {
  return account.kind === 'org' && !mayDo(role, permission) ? person.id : undefined;
}

/** 403 org_role_required unless the caller's role in the account it acts for allows it (their own account allows everything). */
export function requirePermission(request: FastifyRequest, permission: OrgPermission): SignedIn {
  const caller = signedIn(request);
  if (caller.account.kind === 'org') assertMay(caller.role, permission);
  return caller;
}
