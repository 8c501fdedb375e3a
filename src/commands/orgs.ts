// Organisations: made with their first owner, members added, given roles and removed (their
// keys kept or revoked with them), and monthly budgets set. Each is one unit of work that
// records an account change for the organisation, so every instance reloads its budgets
// and drops the keys revoked with a member at once. An organisation always keeps an owner.
import { Refusal } from '../errors.js';
import type { OrgRole } from '../store/org-store.js';
import type { Account, Actor, Store } from '../store/store.js';
import { audit, CommandSet } from './unit-of-work.js';

export class OrgCommands extends CommandSet {
  /** A new organisation on `tier`, owned by `owner` (a person's account). Throws OrgNameTakenError. */
  async create(name: string, owner: Account, tier: string, actor?: Actor): Promise<Account> {
    return this.commit(async (tx) => {
      const org = await tx.createOrg({ name, tier, ownerId: owner.id });
      await audit(tx, actor, { action: 'org.create', target: { kind: 'account', id: org.id }, before: null, after: { name: org.name, tier, owner: owner.email } });
      return org;
    });
  }

  /** Adds the person with `role`, or changes their role; the last owner cannot step down. */
  async setMember(orgId: string, person: Account, role: OrgRole, actor?: Actor): Promise<void> {
    await this.commit(async (tx) => {
      const before = await tx.findMembership(orgId, person.id);
      if (before?.role === 'owner' && role !== 'owner') await this.keepAnOwner(tx, orgId);
      await tx.setMember(orgId, person.id, role);
      await audit(tx, actor, { action: 'org.set_member', target: { kind: 'account', id: orgId }, before: before ? { member: person.email, role: before.role } : null, after: { member: person.email, role } });
    });
  }

  /**
   * Removes the person; the keys they made stay the organisation's unless `revokeKeys`.
   * False when they did not belong. The last owner cannot be removed.
   */
  async removeMember(orgId: string, person: Account, revokeKeys: boolean, actor?: Actor): Promise<{ removed: boolean; revokedKeyIds: string[] }> {
    return this.commit(async (tx) => {
      const before = await tx.findMembership(orgId, person.id);
      if (before?.role === 'owner') await this.keepAnOwner(tx, orgId);
      const outcome = await tx.removeMember(orgId, person.id, revokeKeys);
      if (outcome.removed) {
        await audit(tx, actor, { action: 'org.remove_member', target: { kind: 'account', id: orgId }, before: { member: person.email, role: before!.role }, after: { revoked_keys: outcome.revokedKeyIds.length } });
      }
      return outcome;
    });
  }

  /** A monthly budget for one member, or (memberId null) for the whole organisation; null removes it. */
  async setBudget(orgId: string, memberId: string | null, monthlyMicros: number | null, actor?: Actor): Promise<void> {
    await this.commit(async (tx) => {
      const before = (await tx.listBudgets(orgId)).find((budget) => budget.memberId === memberId);
      await tx.setBudget(orgId, memberId, monthlyMicros);
      await audit(tx, actor, {
        action: 'org.set_budget',
        target: { kind: 'account', id: orgId },
        before: before ? { member_id: memberId, monthly_micros: before.monthlyMicros } : null,
        after: { member_id: memberId, monthly_micros: monthlyMicros },
      });
    });
  }

  /** The organisation's members act for it only when signed in with OpenID Connect (or again with any sign-in). */
  async requireSso(orgId: string, required: boolean, actor?: Actor): Promise<Account> {
    return this.commit(async (tx) => {
      const org = await tx.setOrgRequireSso(orgId, required);
      await audit(tx, actor, { action: 'org.require_sso', target: { kind: 'account', id: orgId }, before: { require_sso: !required }, after: { require_sso: required } });
      return org;
    });
  }

  /** Another owner must remain once this one steps down or leaves. */
  private async keepAnOwner(tx: Store, orgId: string): Promise<void> {
    const owners = (await tx.listMembers(orgId)).filter((member) => member.role === 'owner');
    if (owners.length <= 1) throw new Refusal('org_last_owner');
  }
}
