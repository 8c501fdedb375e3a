// Counts failures (wrong passwords, unknown redemption codes) per key and refuses further
// attempts once a key has `limit` failures within the window. An exact sliding window: a
// GCRA limiter (limits/) refills continuously, so it would let a sixth failure through
// three minutes after five, where the rule is "at most 5 per 15 minutes". This process's
// throttle is here; shared mode's, the same window in Redis, is shared/shared-throttle.ts.
import { RateLimitedError } from '../errors.js';

const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const SWEEP_EVERY = 1_000;

export interface FailureThrottle {
  /** Throws RateLimitedError (429 with Retry-After) when the key has used up its failures. */
  assertAllowed(key: string): void | Promise<void>;
  recordFailure(key: string): void | Promise<void>;
  forget(key: string): void | Promise<void>;
}

/** Makes the throttle called `name` (a key space of its own in shared state). */
export type FailureThrottleFactory = (name: string, limit: number, windowMs: number) => FailureThrottle;

/** The refusal once `limit` failures fall within the window, the oldest counted at `oldestMs`. */
export function throttledError(limit: number, windowMs: number, oldestMs: number, nowMs: number): RateLimitedError {
  const retryAtMs = oldestMs + windowMs;
  const retryAfterSec = Math.max(1, Math.ceil((retryAtMs - nowMs) / 1000));
  return new RateLimitedError({ limit, remaining: 0, resetAtUnixSec: Math.ceil(retryAtMs / 1000) }, retryAfterSec);
}

/** At most `limit` timestamps per key, so memory stays small; keys are swept as they go quiet. */
export class MemoryFailureThrottle implements FailureThrottle {
  private readonly failuresByKey = new Map<string, number[]>();
  private operations = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  assertAllowed(key: string, nowMs = Date.now()): void {
    const recent = this.recent(key, nowMs);
    if (recent.length < this.limit) return;
    throw throttledError(this.limit, this.windowMs, recent[recent.length - this.limit]!, nowMs);
  }

  recordFailure(key: string, nowMs = Date.now()): void {
    const recent = this.recent(key, nowMs);
    recent.push(nowMs);
    if (recent.length > this.limit) recent.splice(0, recent.length - this.limit);
    this.failuresByKey.set(key, recent);
    if (++this.operations % SWEEP_EVERY === 0) this.sweep(nowMs);
  }

  forget(key: string): void {
    this.failuresByKey.delete(key);
  }

  private recent(key: string, nowMs: number): number[] {
    return (this.failuresByKey.get(key) ?? []).filter((at) => nowMs - at < this.windowMs);
  }

  private sweep(nowMs: number): void {
    for (const [key, failures] of this.failuresByKey) {
      if (nowMs - failures[failures.length - 1]! >= this.windowMs) this.failuresByKey.delete(key);
    }
  }
}

export interface DashboardThrottles {
  /** Failed sign-ins (and wrong current passwords) per account: 5 in 15 minutes. */
  signInPerAccount: FailureThrottle;
  /** Failed sign-ins per client address: 20 in 15 minutes. */
  signInPerAddress: FailureThrottle;
  /** Failed redemptions per account: 10 in 15 minutes (codes are guessable only by trying). */
  redeemPerAccount: FailureThrottle;
  /** Sign-ups per client address, successful or not, per hour (each costs a scrypt run). */
  signUpPerAddress: FailureThrottle;
  /** "Forgot password" mails per email address, sent or not: 5 in 15 minutes (no inbox flooded). */
  resetMailPerAccount: FailureThrottle;
  /** "Forgot password" requests per client address: 20 in 15 minutes. */
  resetMailPerAddress: FailureThrottle;
}

export const memoryFailureThrottle: FailureThrottleFactory = (_name, limit, windowMs) => new MemoryFailureThrottle(limit, windowMs);

export function createDashboardThrottles(signUpsPerAddressPerHour: number, create: FailureThrottleFactory): DashboardThrottles {
  return {
    signInPerAccount: create('sign-in-account', 5, FIFTEEN_MINUTES_MS),
    signInPerAddress: create('sign-in-address', 20, FIFTEEN_MINUTES_MS),
    redeemPerAccount: create('redeem-account', 10, FIFTEEN_MINUTES_MS),
    signUpPerAddress: create('sign-up-address', signUpsPerAddressPerHour, 4 * FIFTEEN_MINUTES_MS),
    resetMailPerAccount: create('reset-mail-account', 5, FIFTEEN_MINUTES_MS),
    resetMailPerAddress: create('reset-mail-address', 20, FIFTEEN_MINUTES_MS),
  };
}
