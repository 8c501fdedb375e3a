// Row type of the invitation table (migration 0019), as Kysely sees it; the Database of
// tables.ts takes it in.

export interface OrgInvitationsTable {
  id: string;
  org_id: string;
  email: string; // lower-case
  role: string;
  token_hash: string; // SHA-256 of the link's token, hex
  invited_by: string;
  created_at: string;
  expires_at: string;
  accepted_at: string | null;
  declined_at: string | null;
  revoked_at: string | null;
}

export interface InvitationTables {
  org_invitations: OrgInvitationsTable;
}
