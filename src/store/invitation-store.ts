// Invitations to an organisation as the Store port holds them (store.ts extends this port):
// an address asked to join with a role, through a link whose token the store knows only by
// its SHA-256. An invitation is open until it expires or is accepted, declined or revoked.
import type { OrgRole } from './org-store.js';

export interface Invitation {
  id: string;
  orgId: string;
  /** Lower-case. */
  email: string;
  role: OrgRole;
  /** The person who invited. */
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
  declinedAt: string | null;
  revokedAt: string | null;
}

export interface NewInvitation {
  orgId: string;
  email: string;
  role: OrgRole;
  tokenHash: string;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
}

/** How an invitation ended, when it did. */
export type InvitationAnswer = 'accepted' | 'declined' | 'revoked';

export interface InvitationStore {
  createInvitation(input: NewInvitation): Promise<Invitation>;
  findInvitationByTokenHash(tokenHash: string): Promise<Invitation | undefined>;
  /** One of the organisation's invitations, by id. */
  findInvitation(orgId: string, id: string): Promise<Invitation | undefined>;
  /** The organisation's open invitations (not answered, not expired at `nowIso`), newest first. */
  listPendingInvitations(orgId: string, nowIso: string): Promise<Invitation[]>;
  /** Ends the invitation, only while it is still unanswered: false when another answer came first. */
  answerInvitation(id: string, answer: InvitationAnswer, atIso: string): Promise<boolean>;
}
