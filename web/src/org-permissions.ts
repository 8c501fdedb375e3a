// What each role in an organisation may do, as the dashboard shows it: the server's table
// (src/auth/org-roles.ts) decides, and refuses with 403 anyway; this only hides or disables
// the controls a role may not use.
import type { OrgRole } from './types';

export const ORG_ROLES: readonly OrgRole[] = ['owner', 'admin', 'billing', 'member'];

const ROLE_NAMES: Record<OrgRole, string> = { owner: 'Owner', admin: 'Admin', billing: 'Billing', member: 'Member' };

export function formatRole(role: OrgRole): string {
  return ROLE_NAMES[role];
}

/** Add and remove members, change roles (but to or from owner). */
export function mayManageMembers(role: OrgRole): boolean {
  return role === 'owner' || role === 'admin';
}

/** Give or take the owner role. */
export function mayManageOwners(role: OrgRole): boolean {
  return role === 'owner';
}

export function mayEditBudgets(role: OrgRole): boolean {
  return role === 'owner' || role === 'admin';
}

/** Everyone's usage and request log; a member sees their own. */
export function maySeeEveryonesUsage(role: OrgRole): boolean {
  return role !== 'member';
}
