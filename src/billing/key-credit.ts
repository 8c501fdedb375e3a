// A key's credit limit (KeyControls.creditLimit), a credit counter of both admissions: what
// the key spent in its window (its settled charges), plus what its running requests hold,
// plus the new request's worst case, stays within the limit (credit-rule.ts assertFits), or
// 402 key_credit_limit. A window is
// named by text: `total`, or the UTC month `YYYY-MM` a charge's usage record is dated in, so
// the store's sum of a window and the live count agree on which charges belong to it.
import type { CreditPeriod, KeyCreditLimit } from '../store/store.js';

/** The key a request is made with, when it has a credit limit. */
export interface LimitedKey {
  id: string;
  limit: KeyCreditLimit;
}

/** The window a charge dated `iso` (ISO 8601, UTC) falls in. */
export function creditWindowOf(period: CreditPeriod, iso: string): string {
  return period === 'total' ? 'total' : iso.slice(0, 7);
}

/** Where a window starts, for the store's sum; null for all time. */
export function creditWindowStart(window: string): string | null {
  return window === 'total' ? null : `${window}-01T00:00:00.000Z`;
}

/**
 * Whether a charge in `window` belongs after `current` (a new month began): months are
 * `YYYY-MM`, so they compare as text. False for `total`, which never ends.
 */
export function isLaterWindow(window: string, current: string): boolean {
  return window !== 'total' && current !== 'total' && window > current;
}
