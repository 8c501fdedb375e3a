// The part of KyselyStore (kysely-store.ts) for invitations to an organisation (invitations.ts).
import type { Invitation, InvitationAnswer, InvitationStore, NewInvitation } from './invitation-store.js';
import * as invitations from './invitations.js';
import { KyselyAlertStore } from './kysely-alert-store.js';

export abstract class KyselyInvitationStore extends KyselyAlertStore implements InvitationStore {
  createInvitation(input: NewInvitation): Promise<Invitation> {
    return invitations.createInvitation(this.db, input);
  }

  findInvitationByTokenHash(tokenHash: string): Promise<Invitation | undefined> {
    return invitations.findInvitationByTokenHash(this.db, tokenHash);
  }

  findInvitation(orgId: string, id: string): Promise<Invitation | undefined> {
    return invitations.findInvitation(this.db, orgId, id);
  }

  listPendingInvitations(orgId: string, nowIso: string): Promise<Invitation[]> {
    return invitations.listPendingInvitations(this.db, orgId, nowIso);
  }

  answerInvitation(id: string, answer: InvitationAnswer, atIso: string): Promise<boolean> {
    return invitations.answerInvitation(this.db, id, answer, atIso);
  }
}
