// Shared mode's credit refusals, which say whether anything is left once running requests
// settle (SharedAdmission then refuses the account or key without a round trip).
import type { SpendLimit } from '../billing/spend-limit.js';
import { InsufficientCreditsError } from '../errors.js';

/**
 * The account's credits refused the request; `spent`: its balance is gone, not only held by
 * running requests, so nothing but a credit to it (a balance change) lets another in.
 */
export class AccountCreditRefusal extends InsufficientCreditsError {
  constructor(
    neededMicros: number | undefined,
    availableMicros: number,
    readonly spent: boolean,
  ) {
    super(neededMicros, availableMicros);
  }
}

/** A limit on spending refused the request; `spent`: nothing is left of it even once running requests settle. */
export class SpendLimitRefusal extends InsufficientCreditsError {
  constructor(
    readonly limit: SpendLimit,
    neededMicros: number | undefined,
    availableMicros: number,
    readonly spent: boolean,
  ) {
    super(neededMicros, availableMicros, { reason: limit.reason });
  }
}
