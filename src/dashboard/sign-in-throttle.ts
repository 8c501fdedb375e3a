// Counts failures (wrong passwords, unknown redemption codes) per key and refuses further
// attempts once a key has `limit` failures within the window. An exact sliding window: a
// GCRA limiter (limits/) refills continuously, so it would let a sixth failure through
// three minutes after five, where the rule is "at most 5 per 15 minutes". At most `limit`
// timestamps per key, so memory stays small; keys are swept as they go quiet.
import { RateLimitedError } from '../errors.js';

export interface FailureRule {
  limit: number;
  windowMs: number;
}

const SWEEP_EVERY = 1_000;

export class FailureThrottle {
  private readonly failuresByKey = new Map<string, number[]>();
  private operations = 0;

  /** Throws RateLimitedError (429 with Retry-After) when the key has used up its failures. */
  assertAllowed(key: string, rule: FailureRule, nowMs = Date.now()): void {
    const recent = this.recent(key, rule, nowMs);
    if (recent.length < rule.limit) return;
    const retryAtMs = recent[recent.length - rule.limit]! + rule.windowMs;
    const retryAfterSec = Math.max(1, Math.ceil((retryAtMs - nowMs) / 1000));
    throw new RateLimitedError({ limit: rule.limit, remaining: 0, resetAtUnixSec: Math.ceil(retryAtMs / 1000) }, retryAfterSec);
  }

  recordFailure(key: string, rule: FailureRule, nowMs = Date.now()): void {
    const recent = this.recent(key, rule, nowMs);
    recent.push(nowMs);
    if (recent.length > rule.limit) recent.splice(0, recent.length - rule.limit);
    this.failuresByKey.set(key, recent);
    if (++this.operations % SWEEP_EVERY === 0) this.sweep(nowMs, rule.windowMs);
  }

  forget(key: string): void {
    this.failuresByKey.delete(key);
  }

  private recent(key: string, rule: FailureRule, nowMs: number): number[] {
    return (this.failuresByKey.get(key) ?? []).filter((at) => nowMs - at < rule.windowMs);
  }

  private sweep(nowMs: number, windowMs: number): void {
    for (const [key, failures] of this.failuresByKey) {
      if (nowMs - failures[failures.length - 1]! >= windowMs) this.failuresByKey.delete(key);
    }
  }
}
