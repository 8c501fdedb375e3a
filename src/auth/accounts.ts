import { ForbiddenError } from '../errors.js';
import type { Account } from '../store/store.js';

/** Step 2 of the request path: a suspended account gets 403 (spec 5.7). */
export function assertAccountActive(account: Account): void {
  if (account.status !== 'active') throw new ForbiddenError('account_suspended');
}
