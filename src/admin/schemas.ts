// Request pieces the admin routes share: an account named in the path, paging, money.
import { Type } from '@sinclair/typebox';
import { MESSAGES, TRIM } from '../validation/input-validator.js';
import { NotFoundInStoreError } from '../errors.js';
import type { AccountQueries } from '../store/queries.js';
import type { Account } from '../store/store.js';

/** An account by id, or by email (anything with an `@`). */
export const AccountParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 320, description: 'account id or email' }) });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

export const Reason = Type.String({ [TRIM]: true, minLength: 1, maxLength: 500, [MESSAGES]: { minLength: 'Give a reason; it is kept in the ledger.' } });

/** Micro-credits; a safe integer so that sums stay exact. */
export const MAX_MICROS = Number.MAX_SAFE_INTEGER;

export async function requireAccount(store: Pick<AccountQueries, 'findAccount'>, ref: string): Promise<Account> {
  const account = await store.findAccount(ref);
  if (!account) throw new NotFoundInStoreError('account', ref);
  return account;
}
