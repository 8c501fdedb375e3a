// OpenID Connect identities: which account a provider's (issuer, subject) signs in to.
// The subject, not the email, is the key: an address can change at the provider or be
// given to someone else, a subject never is. Its own port (OidcIdentityStore), which the
// Store extends, and its own functions, which run on the database or a transaction.
import type { Db } from './sql.js';

/** How a dashboard session was made; an organisation that requires SSO accepts only 'oidc'. */
export type AuthMethod = 'password' | 'oidc';

export interface OidcIdentity {
  issuer: string;
  subject: string;
  accountId: string;
  email: string;
  createdAt: string;
  lastSignInAt: string;
}

export type NewOidcIdentity = Pick<OidcIdentity, 'issuer' | 'subject' | 'accountId' | 'email'>;

export interface OidcIdentityStore {
  findOidcIdentity(issuer: string, subject: string): Promise<OidcIdentity | undefined>;
  /** The account's identity at the issuer, if it has one. */
  findOidcIdentityOfAccount(issuer: string, accountId: string): Promise<OidcIdentity | undefined>;
  /** Links the identity to its account; a subject links once (a second link throws a unique violation). */
  linkOidcIdentity(identity: NewOidcIdentity, nowIso: string): Promise<void>;
  /** A sign-in with the identity: when, and the address the provider gave this time. */
  recordOidcSignIn(issuer: string, subject: string, email: string, nowIso: string): Promise<void>;
}

export async function findOidcIdentity(db: Db, issuer: string, subject: string): Promise<OidcIdentity | undefined> {
  const row = await db.selectFrom('oidc_identities').selectAll().where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  return (
    row && {
      issuer: row.issuer,
      subject: row.subject,
      accountId: row.account_id,
      email: row.email,
      createdAt: row.created_at,
      lastSignInAt: row.last_sign_in_at,
    }
  );
}

export async function findOidcIdentityOfAccount(db: Db, issuer: string, accountId: string): Promise<OidcIdentity | undefined> {
  const row = await db.selectFrom('oidc_identities').select('subject').where('issuer', '=', issuer).where('account_id', '=', accountId).executeTakeFirst();
  return row && findOidcIdentity(db, issuer, row.subject);
}

export async function linkOidcIdentity(db: Db, identity: NewOidcIdentity, nowIso: string): Promise<void> {
  await db
    .insertInto('oidc_identities')
    .values({ issuer: identity.issuer, subject: identity.subject, account_id: identity.accountId, email: identity.email, created_at: nowIso, last_sign_in_at: nowIso })
    .execute();
}

export async function recordOidcSignIn(db: Db, issuer: string, subject: string, email: string, nowIso: string): Promise<void> {
  await db.updateTable('oidc_identities').set({ email, last_sign_in_at: nowIso }).where('issuer', '=', issuer).where('subject', '=', subject).execute();
}
