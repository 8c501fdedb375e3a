// One-time links for an account's owner. A token is consumed by a conditional update, so of
// two uses racing (two tabs, two instances) exactly one finds it unused.
import type { Db } from './sql.js';
import type { NewAccountToken } from './store.js';
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
