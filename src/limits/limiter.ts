// Rate limiting per account: GCRA (the generic cell rate algorithm). Each limit is a
// "theoretical arrival time" that moves forward by cost × interval per use; a request is
// refused when that would run more than one full window ahead of now. Unlike a fixed
// window, it never lets 2× the limit through around a window boundary, and it stores one
// number per account and limit, which maps directly onto one Redis key later.

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  /** Uses left right now (after this one, when allowed). */
  remaining: number;
  /** Unix seconds when the limit is fully replenished. */
  resetAtUnixSec: number;
  /** Seconds to wait before a retry could pass (0 when allowed). */
  retryAfterSec: number;
}

export interface Limiter {
  /**
   * Takes `cost` units of a limit of `limit` per `windowMs` for `key`, or refuses without
   * taking anything.
   */
  take(key: string, limit: number, windowMs: number, cost: number, nowMs?: number): RateLimitDecision;
  /** Adds (or with a negative cost returns) units without a check: usage known afterwards. */
  charge(key: string, limit: number, windowMs: number, cost: number, nowMs?: number): void;
  /** The state of a limit without taking anything. */
  peek(key: string, limit: number, windowMs: number, nowMs?: number): RateLimitDecision;
}
