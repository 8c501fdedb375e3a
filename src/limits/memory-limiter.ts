// GCRA in process memory (see limiter.ts). One instance per process.
import type { Limiter, RateLimitDecision } from './limiter.js';

/** Entries idle longer than this are dropped on the next sweep. */
const SWEEP_EVERY = 10_000;

export class MemoryLimiter implements Limiter {
  /** key → theoretical arrival time (ms): when the limit would be fully replenished. */
  private readonly tatByKey = new Map<string, number>();
  private operations = 0;

  take(key: string, limit: number, windowMs: number, cost: number, nowMs = Date.now()): RateLimitDecision {
    this.maybeSweep(nowMs);
    const intervalMs = windowMs / limit;
    const tat = Math.max(this.tatByKey.get(key) ?? nowMs, nowMs);
    const newTat = tat + cost * intervalMs;
    if (newTat - nowMs > windowMs) {
      // Refused: report what is left now, and when enough will have drained for `cost`.
      const waitMs = newTat - windowMs - nowMs;
      return decision(false, limit, windowMs, intervalMs, tat, nowMs, Math.max(1, Math.ceil(waitMs / 1000)));
    }
    this.tatByKey.set(key, newTat);
    return decision(true, limit, windowMs, intervalMs, newTat, nowMs, 0);
  }

  charge(key: string, limit: number, windowMs: number, cost: number, nowMs = Date.now()): void {
    const intervalMs = windowMs / limit;
    const tat = Math.max(this.tatByKey.get(key) ?? nowMs, nowMs);
    this.tatByKey.set(key, Math.max(nowMs, tat + cost * intervalMs));
  }

  peek(key: string, limit: number, windowMs: number, nowMs = Date.now()): RateLimitDecision {
    const intervalMs = windowMs / limit;
    const tat = Math.max(this.tatByKey.get(key) ?? nowMs, nowMs);
    return decision(true, limit, windowMs, intervalMs, tat, nowMs, 0);
  }

  private maybeSweep(nowMs: number): void {
    if (++this.operations % SWEEP_EVERY !== 0) return;
    for (const [key, tat] of this.tatByKey) if (tat <= nowMs) this.tatByKey.delete(key);
  }
}

function decision(
  allowed: boolean,
  limit: number,
  windowMs: number,
  intervalMs: number,
  tat: number,
  nowMs: number,
  retryAfterSec: number,
): RateLimitDecision {
  const usedMs = tat - nowMs;
  return {
    allowed,
    limit,
    remaining: Math.max(0, Math.floor((windowMs - usedMs) / intervalMs)),
    resetAtUnixSec: Math.ceil(Math.max(tat, nowMs) / 1000),
    retryAfterSec,
  };
}
