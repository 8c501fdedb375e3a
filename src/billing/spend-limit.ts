// Limits on spending in a window, a credit counter of both admissions: a key's credit limit
// (KeyControls.creditLimit), an organisation member's monthly budget, the organisation's
// own. What the limit's scope spent in its window (its settled charges), plus what its
// running requests hold, plus the new request's worst case, stays within the limit
// (credit-rule.ts assertFits), or 402 with `reason` naming the limit. A window is named by
// text: `total`, or the UTC month `YYYY-MM` a charge's usage record is dated in, so the
// store's sum of a window and the live count agree on which charges belong to it.
import type { OrgBudget, SpendScope } from '../store/org-store.js';
import type { ApiKeyRecord, CreditPeriod, KeyCreditLimit, UsageRecord } from '../store/store.js';

import type { SpendReason } from '../errors.js';

export type { SpendReason };

/** One limit a request's charges count against. */
export interface SpendLimit {
  /** Names its count (in memory and in Redis): `key:ID`, `member:ORG:ACCOUNT`, `org:ORG`. */
  id: string;
  scope: SpendScope;
  limit: KeyCreditLimit;
  reason: SpendReason;
}

/** The limits a request made with `key` counts against: the key's own, its member's budget, the organisation's. */
export function spendLimitsOf(key: ApiKeyRecord, budgets: readonly OrgBudget[]): SpendLimit[] {
  const limits: SpendLimit[] = [];
  if (key.controls.creditLimit !== null) limits.push(keySpendLimit(key.id, key.controls.creditLimit));
  for (const budget of budgets) if (budget.memberId === null || budget.memberId === key.memberId) limits.push(budgetSpendLimit(key.accountId, budget));
  return limits;
}

/** An organisation's monthly budget, its own or a member's, as a limit on spending. */
export function budgetSpendLimit(orgId: string, { memberId, monthlyMicros }: OrgBudget): SpendLimit {
  const limit = { amountMicros: monthlyMicros, period: 'month' as const };
  if (memberId === null) return { id: `org:${orgId}`, scope: { accountId: orgId }, limit, reason: 'org_budget' };
  return { id: `member:${orgId}:${memberId}`, scope: { accountId: orgId, memberId }, limit, reason: 'member_budget' };
}

export function keySpendLimit(keyId: string, limit: KeyCreditLimit): SpendLimit {
  return { id: `key:${keyId}`, scope: { keyId }, limit, reason: 'key_credit_limit' };
}

/** Whether a usage record's charge counts in the scope (the window aside). */
export function countsToward(scope: SpendScope, record: Pick<UsageRecord, 'keyId' | 'accountId' | 'memberId'>): boolean {
  if ('keyId' in scope) return record.keyId === scope.keyId;
  return record.accountId === scope.accountId && (scope.memberId === undefined || record.memberId === scope.memberId);
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
