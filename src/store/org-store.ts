// Organisations as the Store port holds them (store.ts extends this port). An organisation
// is an account of kind 'org' (its wallet, plan and Stripe customer are the account's);
// people belong to it with a role, and it may limit monthly spending, its own or a member's.
import { ORGANISATION_ROLES, type OrganisationRole } from '../config/auth-schema.js';
import type { Account } from './account-records.js';

/**
 * `owner`: everything, deleting the organisation and changing owners included; `admin`:
 * members, keys, budgets; `billing`: payments, plans, invoices; `member`: their own keys
 * and usage.
 */
export type OrgRole = OrganisationRole;
export const ORG_ROLES: readonly OrgRole[] = ORGANISATION_ROLES;

export interface OrgMember {
  accountId: string;
  email: string;
  name: string | null;
  role: OrgRole;
  joinedAt: string;
}

/** A person's place in one organisation. */
export interface Membership {
  org: Account;
  role: OrgRole;
}

/** At most `monthlyMicros` spent per calendar month (UTC): by one member, or (memberId null) by the whole organisation. */
export interface OrgBudget {
  memberId: string | null;
  monthlyMicros: number;
}

/** Whose spending a sum counts: a key's, a member's in an organisation, or an account's (an organisation's) as a whole. */
export type SpendScope = { keyId: string } | { accountId: string; memberId?: string };

export interface OrgStore {
  /** The organisation's account and its first owner, together. Throws OrgNameTakenError. */
  createOrg(input: { name: string; tier: string; ownerId: string }): Promise<Account>;
  /** By id or by name. */
  findOrg(idOrName: string): Promise<Account | undefined>;
  /** Every organisation, oldest first, with its balance and how many members it has. */
  listOrgs(): Promise<(Account & { balanceMicros: number; members: number })[]>;
  /** Owners first, then by when they joined. */
  listMembers(orgId: string): Promise<OrgMember[]>;
  findMembership(orgId: string, accountId: string): Promise<Membership | undefined>;
  /** The organisations a person belongs to, by name. */
  listMemberships(accountId: string): Promise<Membership[]>;
  /** Adds the person, or changes their role when they belong already. */
  setMember(orgId: string, accountId: string, role: OrgRole): Promise<void>;
  /**
   * Removes the person (false: they did not belong), ends their sessions' acting for the
   * organisation, and revokes the keys they made in it when `revokeKeys`; returns those keys' ids.
   */
  removeMember(orgId: string, accountId: string, revokeKeys: boolean): Promise<{ removed: boolean; revokedKeyIds: string[] }>;
  listBudgets(orgId: string): Promise<OrgBudget[]>;
  /** Sets (or, with null, removes) a budget, recording an account change so every instance reloads it. */
  setBudget(orgId: string, memberId: string | null, monthlyMicros: number | null): Promise<void>;
  /** Whether the organisation's members act for it only when signed in with OpenID Connect. */
  setOrgRequireSso(orgId: string, required: boolean): Promise<Account>;
  /** The session acts for the organisation (null: the person's own account). */
  setSessionOrg(tokenHash: string, orgId: string | null): Promise<void>;
}
