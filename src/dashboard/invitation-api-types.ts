// The dashboard API's invitation replies (/api/dashboard/orgs/current/invitations*,
// /api/dashboard/invitations/*) as JSON types, beside api-types.ts and under its rules:
// camelCase, ISO 8601 UTC times, null where a value is absent, no imports (the web's
// typecheck reads this file and nothing behind it).

export type InvitedRole = 'owner' | 'admin' | 'billing' | 'member';

/** An open invitation of the organisation acted for. */
export interface InvitationView {
  id: string;
  email: string;
  role: InvitedRole;
  createdAt: string;
  expiresAt: string;
}

/** POST /orgs/current/invitations: mailed through SMTP when it is configured; else the link to hand over (null once mailed). */
export interface InvitationSent {
  invitation: InvitationView;
  mailed: boolean;
  link: string | null;
}

/** GET /orgs/current/invitations: the open ones, newest first. */
export interface InvitationList {
  invitations: InvitationView[];
}

/** GET /invitations/:token, before anyone signs in: what the link offers, and whether the address has an account to sign in to. */
export interface InvitationPreview {
  orgName: string;
  email: string;
  role: InvitedRole;
  expiresAt: string;
  hasAccount: boolean;
}

/** POST /invitations/:token/accept: the organisation joined, which the session now acts for. */
export interface InvitationAccepted {
  org: { id: string; name: string; role: InvitedRole };
}
