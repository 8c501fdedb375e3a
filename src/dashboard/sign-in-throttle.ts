// Counts failures (wrong passwords, unknown redemption codes) per key and refuses further
// attempts once a key has `limit` failures within the window. An exact sliding window: a
// GCRA limiter (limits/) refills continuously, so it would let a sixth failure through
// three minutes after five, where the rule is "at most 5 per 15 minutes". At most `limit`
// timestamps per key, so memory stays small; keys are swept as they go quiet.
import { RateLimitedError } from '../errors.js';

const FIFTEEN_MINUTES_MS = 15 * 60 * 1000;
const SWEEP_EVERY = 1_000;

export class FailureThrottle {
  private readonly failuresByKey = new Map<string, number[]>();
  private operations = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  /** Throws RateLimitedError (429 with Retry-After) when the key has used up its failures. */
  assertAllowed(key: string, nowMs = Date.now()): void {
    const recent = this.recent(key, nowMs);
    if (recent.length < this.limit) return;
    const retryAtMs = recent[recent.length - this.limit]! + this.windowMs;
    const retryAfterSec = Math.max(1, Math.ceil((retryAtMs - nowMs) / 1000));
    throw new RateLimitedError({ limit: this.limit, remaining: 0, resetAtUnixSec: Math.ceil(retryAtMs / 1000) }, retryAfterSec);
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
}

export function createDashboardThrottles(signUpsPerAddressPerHour: number): DashboardThrottles {
  return {
    signInPerAccount: new FailureThrottle(5, FIFTEEN_MINUTES_MS),
    signInPerAddress: new FailureThrottle(20, FIFTEEN_MINUTES_MS),
    redeemPerAccount: new FailureThrottle(10, FIFTEEN_MINUTES_MS),
    signUpPerAddress: new FailureThrottle(signUpsPerAddressPerHour, 4 * FIFTEEN_MINUTES_MS),
  };
}
