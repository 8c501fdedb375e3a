// Dashboard sessions: the cookie holds a token, the store only its SHA-256.
import type { Db } from './sql.js';
import type { Session } from './store.js';

export async function createSession(db: Db, session: Session): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      token_hash: session.tokenHash,
      account_id: session.accountId,
      csrf_token: session.csrfToken,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
      last_seen_at: session.lastSeenAt,
      auth_method: session.authMethod,
    })
    .execute();
}

export async function findSession(db: Db, tokenHash: string): Promise<Session | undefined> {
  const row = await db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return (
    row && {
      tokenHash: row.token_hash,
      accountId: row.account_id,
      csrfToken: row.csrf_token,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      lastSeenAt: row.last_seen_at,
      orgId: row.org_id ?? null,
      authMethod: row.auth_method === 'oidc' ? 'oidc' : 'password',
    }
  );
}

export async function touchSession(db: Db, tokenHash: string, lastSeenAt: string): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: lastSeenAt }).where('token_hash', '=', tokenHash).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

export async function deleteOtherSessions(db: Db, accountId: string, keepTokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('account_id', '=', accountId).where('token_hash', '!=', keepTokenHash).execute();
}

export async function deleteExpiredSessions(db: Db, nowIso: string): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', nowIso).execute();
}
