// Invitations to an organisation (invitation-store.ts has the port). An answer is one
// conditional update on the three answer columns, so of an accept and a revoke racing
// (two tabs, two instances) exactly one lands.
import type { Selectable } from 'kysely';
import { newId } from '../ids.js';
import type { Invitation, InvitationAnswer, NewInvitation } from './invitation-store.js';
import type { OrgInvitationsTable } from './invitation-tables.js';
import type { OrgRole } from './org-store.js';
import type { Db } from './sql.js';

export async function createInvitation(db: Db, input: NewInvitation): Promise<Invitation> {
  const row: OrgInvitationsTable = {
    id: newId('inv'),
    org_id: input.orgId,
    email: input.email.toLowerCase(),
    role: input.role,
    token_hash: input.tokenHash,
    invited_by: input.invitedBy,
    created_at: input.createdAt,
    expires_at: input.expiresAt,
    accepted_at: null,
    declined_at: null,
    revoked_at: null,
  };
  await db.insertInto('org_invitations').values(row).execute();
  return toInvitation(row);
}

export async function findInvitationByTokenHash(db: Db, tokenHash: string): Promise<Invitation | undefined> {
  const row = await db.selectFrom('org_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return row && toInvitation(row);
}

export async function findInvitation(db: Db, orgId: string, id: string): Promise<Invitation | undefined> {
  const row = await db.selectFrom('org_invitations').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  return row && toInvitation(row);
}

export async function listPendingInvitations(db: Db, orgId: string, nowIso: string): Promise<Invitation[]> {
  const rows = await db
    .selectFrom('org_invitations')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('accepted_at', 'is', null)
    .where('declined_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map(toInvitation);
}

const ANSWER_COLUMNS = { accepted: 'accepted_at', declined: 'declined_at', revoked: 'revoked_at' } as const;

export async function answerInvitation(db: Db, id: string, answer: InvitationAnswer, atIso: string): Promise<boolean> {
  const result = await db
    .updateTable('org_invitations')
    .set({ [ANSWER_COLUMNS[answer]]: atIso })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('declined_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

function toInvitation(row: Selectable<OrgInvitationsTable>): Invitation {
  return {
    id: row.id,
    orgId: row.org_id,
    email: row.email,
    role: row.role as OrgRole,
    invitedBy: row.invited_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    acceptedAt: row.accepted_at,
    declinedAt: row.declined_at,
    revokedAt: row.revoked_at,
  };
}
