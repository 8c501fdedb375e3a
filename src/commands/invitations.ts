// Invitations to an organisation: made by whoever may manage its members (the owner role
// only by an owner), withdrawn, declined, and accepted by the person the address belongs to,
// signed in or signing up through the link (the link, mailed to the address, proves it).
// Accepting joins the organisation through the organisation commands in the same unit of
// work, so the answer and the membership are one change or none.
import { hashAccountToken, newLinkToken } from '../auth/account-links.js';
import { assertMay, type OrgPermission } from '../auth/org-roles.js';
import type { Invitation } from '../store/invitation-store.js';
import type { OrgRole } from '../store/org-store.js';
import type { Account, NewSignUp, Store } from '../store/store.js';
import { InvitationRefusal } from './invitation-refusal.js';
import { OrgCommands } from './orgs.js';
import { CommandSet } from './unit-of-work.js';

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Who invites: the person and their role in the organisation. */
export interface Inviter {
  person: Account;
  role: OrgRole;
}

export class InvitationCommands extends CommandSet {
  /**
   * A new invitation of `email` with `role`, and its link's token (which exists only in this
   * answer: the store keeps its hash). An earlier open invitation of the same address is
   * withdrawn, so one link works at a time.
   */
  async invite(org: Account, inviter: Inviter, email: string, role: OrgRole): Promise<{ invitation: Invitation; token: string }> {
    const permissions: OrgPermission[] = role === 'owner' ? ['members', 'owners'] : ['members'];
    for (const permission of permissions) assertMay(inviter.role, permission);
    const address = email.trim().toLowerCase();
    return this.commit(async (tx) => {
      const person = await tx.findAccount(address);
      if (person && (await tx.findMembership(org.id, person.id))) throw new InvitationRefusal('invitation_already_member');
      const nowMs = Date.now();
      const atIso = new Date(nowMs).toISOString();
      for (const earlier of await tx.listPendingInvitations(org.id, atIso)) {
        if (earlier.email === address) await tx.answerInvitation(earlier.id, 'revoked', atIso);
      }
      const { token, tokenHash } = newLinkToken();
      const invitation = await tx.createInvitation({
        orgId: org.id,
        email: address,
        role,
        tokenHash,
        invitedBy: inviter.person.id,
        createdAt: atIso,
        expiresAt: new Date(nowMs + INVITATION_TTL_MS).toISOString(),
      });
      return { invitation, token };
    });
  }

  /** Withdraws one of the organisation's open invitations; its link stops working. */
  async revoke(orgId: string, invitationId: string): Promise<void> {
    await this.commit(async (tx) => {
      const invitation = await tx.findInvitation(orgId, invitationId);
      if (!invitation) throw new InvitationRefusal('invitation_not_found');
      const atIso = new Date().toISOString();
      assertOpen(invitation, atIso);
      if (!(await tx.answerInvitation(invitation.id, 'revoked', atIso))) await refuseAsItIsNow(tx, invitation, atIso);
    });
  }

  /**
   * The signed-in person joins the organisation with the invited role (a person who belongs
   * already keeps their role). Accepting twice is the same as once.
   */
  async accept(token: string, person: Account): Promise<Invitation> {
    return this.commit(async (tx) => {
      const invitation = await openByToken(tx, token);
      if (invitation.email !== person.email.toLowerCase()) throw new InvitationRefusal('invitation_email_mismatch');
      if (invitation.acceptedAt !== null && (await tx.findMembership(invitation.orgId, person.id))) return invitation;
      await this.answer(tx, invitation, 'accepted');
      await join(tx, invitation, person);
      return invitation;
    });
  }

  /**
   * The invited address has no account yet: it is made now, with `signUp`'s password and
   * credits, and joins the organisation, all in one unit of work. The address is the
   * invitation's, proven by the link. Throws EmailTakenError when it has an account.
   */
  async acceptBySignUp(token: string, signUp: Omit<NewSignUp, 'email'>): Promise<{ invitation: Invitation; account: Account }> {
    return this.commit(async (tx) => {
      const invitation = await openByToken(tx, token);
      assertOpen(invitation, new Date().toISOString());
      const account = await tx.signUp({ ...signUp, email: invitation.email });
      await this.answer(tx, invitation, 'accepted');
      await join(tx, invitation, account);
      return { invitation, account };
    });
  }

  /** The link's holder says no; declining twice is the same as once. */
  async decline(token: string): Promise<Invitation> {
    return this.commit(async (tx) => {
      const invitation = await openByToken(tx, token);
      if (invitation.declinedAt === null) await this.answer(tx, invitation, 'declined');
      return invitation;
    });
  }

  private async answer(tx: Store, invitation: Invitation, answer: 'accepted' | 'declined'): Promise<void> {
    const atIso = new Date().toISOString();
    assertOpen(invitation, atIso);
    // Another answer (a revoke, the other tab's accept) may have landed since it was read.
    if (!(await tx.answerInvitation(invitation.id, answer, atIso))) await refuseAsItIsNow(tx, invitation, atIso);
  }
}

/** The invitation a link names, unless it was withdrawn or has expired (accepted and declined ones are the caller's to judge). */
async function openByToken(tx: Store, token: string): Promise<Invitation> {
  const invitation = await tx.findInvitationByTokenHash(hashAccountToken(token));
  if (!invitation) throw new InvitationRefusal('invitation_not_found');
  if (invitation.revokedAt !== null) throw new InvitationRefusal('invitation_revoked');
  if (invitation.acceptedAt === null && invitation.declinedAt === null && invitation.expiresAt <= new Date().toISOString()) {
    throw new InvitationRefusal('invitation_expired');
  }
  return invitation;
}

/** Joins through the organisation commands on this unit of work's store: its changes reach the caches when this one commits. */
async function join(tx: Store, invitation: Invitation, person: Account): Promise<void> {
  if (await tx.findMembership(invitation.orgId, person.id)) return;
  await new OrgCommands(tx).setMember(invitation.orgId, person, invitation.role);
}

/** Refuses an invitation that was answered or has expired at `atIso`. */
export function assertOpen(invitation: Invitation, atIso: string): void {
  const refusal = refusalOf(invitation, atIso);
  if (refusal) throw refusal;
}

function refusalOf(invitation: Invitation, atIso: string): InvitationRefusal | undefined {
  if (invitation.acceptedAt !== null) return new InvitationRefusal('invitation_accepted');
  if (invitation.declinedAt !== null) return new InvitationRefusal('invitation_declined');
  if (invitation.revokedAt !== null) return new InvitationRefusal('invitation_revoked');
  if (invitation.expiresAt <= atIso) return new InvitationRefusal('invitation_expired');
  return undefined;
}

/** A conditional answer found the invitation answered meanwhile: refused for what it is now. */
async function refuseAsItIsNow(tx: Store, invitation: Invitation, atIso: string): Promise<never> {
  const now = (await tx.findInvitation(invitation.orgId, invitation.id)) ?? invitation;
  throw refusalOf(now, atIso) ?? new InvitationRefusal('invitation_not_found');
}
