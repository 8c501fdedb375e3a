// The part of KyselyStore (kysely-store.ts) for organisations (orgs.ts): the organisation's
// account, its members, its budgets, and which one a session acts for.
import { KyselyWebhookStore } from './kysely-webhook-store.js';
import type { Membership, OrgBudget, OrgMember, OrgRole, OrgStore } from './org-store.js';
import * as orgs from './orgs.js';
import type { Account } from './store.js';

export abstract class KyselyOrgStore extends KyselyWebhookStore implements OrgStore {
  createOrg(input: { name: string; tier: string; ownerId: string }): Promise<Account> {
    return this.write((trx) => orgs.createOrg(trx, input));
  }

  findOrg(idOrName: string): Promise<Account | undefined> {
    return orgs.findOrg(this.db, idOrName);
  }

  listOrgs(): Promise<(Account & { balanceMicros: number; members: number })[]> {
    return orgs.listOrgs(this.db);
  }

  listMembers(orgId: string): Promise<OrgMember[]> {
    return orgs.listMembers(this.db, orgId);
  }

  findMembership(orgId: string, accountId: string): Promise<Membership | undefined> {
    return orgs.findMembership(this.db, orgId, accountId);
  }

  listMemberships(accountId: string): Promise<Membership[]> {
    return orgs.listMemberships(this.db, accountId);
  }

  setMember(orgId: string, accountId: string, role: OrgRole): Promise<void> {
    return this.write((trx) => orgs.setMember(trx, this.sqlDialect, orgId, accountId, role));
  }

  removeMember(orgId: string, accountId: string, revokeKeys: boolean): Promise<{ removed: boolean; revokedKeyIds: string[] }> {
    return this.write((trx) => orgs.removeMember(trx, this.sqlDialect, orgId, accountId, revokeKeys));
  }

  listBudgets(orgId: string): Promise<OrgBudget[]> {
    return orgs.listBudgets(this.db, orgId);
  }

  setBudget(orgId: string, memberId: string | null, monthlyMicros: number | null): Promise<void> {
    return this.write((trx) => orgs.setBudget(trx, this.sqlDialect, orgId, memberId, monthlyMicros));
  }

  setOrgRequireSso(orgId: string, required: boolean): Promise<Account> {
    return this.write((trx) => orgs.setOrgRequireSso(trx, this.sqlDialect, orgId, required));
  }

  setSessionOrg(tokenHash: string, orgId: string | null): Promise<void> {
    return orgs.setSessionOrg(this.db, tokenHash, orgId);
  }
}
