// One-time links for an account's owner (password resets, sign-up confirmations). A token is consumed by a conditional update, so of
// two uses racing (two tabs, two instances) exactly one finds it unused.
import type { Db } from './sql.js';
import type { NewAccountToken, PendingSignUp } from './store.js';
import { deleteOtherSessions } from './sessions.js';
import { setPasswordHash } from './accounts.js';

export async function createAccountToken(db: Db, token: NewAccountToken): Promise<void> {
  await db
    .insertInto('account_tokens')
    .values({
      token_hash: token.tokenHash,
      account_id: token.accountId,
      purpose: token.purpose,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Uses a password-reset token: the new password is set and every session of the account
 * ends, in the caller's transaction. Undefined when the token is unknown, used or expired.
 */
export async function resetPassword(trx: Db, tokenHash: string, passwordHash: string, nowIso: string): Promise<string | undefined> {
  const used = await trx
    .updateTable('account_tokens')
    .set({ used_at: nowIso })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', 'password_reset')
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .returning('account_id')
    .executeTakeFirst();
  if (used === undefined) return undefined;
  // Other links sent before stop working with it.
  await trx.updateTable('account_tokens').set({ used_at: nowIso }).where('account_id', '=', used.account_id).where('used_at', 'is', null).execute();
  await setPasswordHash(trx, used.account_id, passwordHash);
  // A reset is what someone who lost control of the account does: no session survives it.
  await deleteOtherSessions(trx, used.account_id, '');
  return used.account_id;
}

export async function createPendingSignUp(db: Db, pending: PendingSignUp): Promise<void> {
  await db
    .insertInto('pending_sign_ups')
    .values({
      token_hash: pending.tokenHash,
      email: pending.email,
      name: pending.name,
      password_hash: pending.passwordHash,
      created_at: pending.createdAt,
      expires_at: pending.expiresAt,
      used_at: null,
    })
    .execute();
}

export async function takePendingSignUp(
  db: Db,
  tokenHash: string,
  nowIso: string,
): Promise<{ email: string; name: string | null; passwordHash: string } | undefined> {
  const row = await db
    .updateTable('pending_sign_ups')
    .set({ used_at: nowIso })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .returning(['email', 'name', 'password_hash'])
    .executeTakeFirst();
  return row && { email: row.email, name: row.name, passwordHash: row.password_hash };
}
