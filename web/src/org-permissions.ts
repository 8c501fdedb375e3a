// What each role in an organisation may do, as the dashboard shows it: the server sends
// each role's permissions with the organisation (src/auth/org-roles.ts decides, and refuses
// with 403 anyway); this only hides or disables the controls a role may not use.
import type { OrgPermission, OrgRef, OrgRole } from './types';

export const ORG_ROLES: readonly OrgRole[] = ['owner', 'admin', 'billing', 'member'];

const ROLE_NAMES: Record<OrgRole, string> = { owner: 'Owner', admin: 'Admin', billing: 'Billing', member: 'Member' };

export function formatRole(role: OrgRole): string {
  return ROLE_NAMES[role];
}

/**
 * `members`: add and remove members, change roles (but to or from owner); `owners`: give or
 * take the owner role; `budgets`: set them; `usage`: everyone's usage and request log (a
 * member sees their own).
 */
export function may(org: Pick<OrgRef, 'permissions'>, permission: OrgPermission): boolean {
  return org.permissions.includes(permission);
}
