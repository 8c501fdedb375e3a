// The 402 rule, in one place for every credit counter (counters.ts).
import { InsufficientCreditsError, type SpendReason } from '../errors.js';

/**
 * The 402 rule of every credit counter (the account's balance, a spend limit):
 * `amountMicros` must fit what is available, and with no amount (the check before a prompt
 * is counted) anything will do. Spec 8: at zero every request is refused, even one that
 * would cost nothing. shared/counter-scripts.ts has its Lua twin, `fits`.
 */
export function assertFits(availableMicros: number, amountMicros: number | undefined, reason?: SpendReason): void {
  if (availableMicros <= 0 || availableMicros < (amountMicros ?? 0)) {
    throw new InsufficientCreditsError(amountMicros, Math.max(0, availableMicros), reason && { reason });
  }
}
