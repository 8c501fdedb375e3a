// What each role in an organisation may do, in one table: the dashboard asks it before
// every organisation route. Operators (the CLI, the admin API) act above it.
import { Refusal } from '../errors.js';
import type { OrgRole } from '../store/org-store.js';

/**
 * `members`: invite, remove, change roles (but owner); `keys`: every key of the organisation
 * (a `member` manages only their own); `budgets`, `webhooks`; `billing`: payments, plans,
 * invoices; `usage`: everyone's usage and request log (a `member` sees their own);
 * `owners`: give or take the owner role, delete the organisation.
 */
export type OrgPermission = 'members' | 'keys' | 'budgets' | 'webhooks' | 'billing' | 'usage' | 'owners';

const PERMISSIONS: Record<OrgRole, readonly OrgPermission[]> = {
  owner: ['members', 'keys', 'budgets', 'webhooks', 'billing', 'usage', 'owners'],
  admin: ['members', 'keys', 'budgets', 'webhooks', 'usage'],
  billing: ['billing', 'usage'],
  member: [],
};

export const ORG_PERMISSIONS: readonly OrgPermission[] = ['members', 'keys', 'budgets', 'webhooks', 'billing', 'usage', 'owners'];

/** What the role may do, for the dashboard to show only the controls it may use. */
export function permissionsOf(role: OrgRole): readonly OrgPermission[] {
  return PERMISSIONS[role];
}

export function mayDo(role: OrgRole, permission: OrgPermission): boolean {
  return PERMISSIONS[role].includes(permission);
}

/** 403 org_role_required unless the role has the permission. */
export function assertMay(role: OrgRole, permission: OrgPermission): void {
  if (!mayDo(role, permission)) throw new Refusal('org_role_required');
}
