import { describe, expect, it } from 'vitest';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';

const MINUTE = 60_000;

describe('GCRA in memory', () => {
  it('allows the limit at once, then one more per interval', () => {
    const limiter = new MemoryLimiter();
    const t0 = 1_000_000;
    for (let i = 0; i < 6; i++) expect(limiter.take('a', 6, MINUTE, 1, t0).allowed).toBe(true);
    const refused = limiter.take('a', 6, MINUTE, 1, t0);
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSec: 10 });
    expect(limiter.take('a', 6, MINUTE, 1, t0 + 9_999).allowed).toBe(false);
    expect(limiter.take('a', 6, MINUTE, 1, t0 + 10_000).allowed).toBe(true);
    expect(limiter.take('a', 6, MINUTE, 1, t0 + 10_001).allowed).toBe(false);
  });

  it('never lets twice the limit through around a window boundary', () => {
    const limiter = new MemoryLimiter();
    const t0 = 5_000_000;
    let allowed = 0;
    // 10 per minute: hammer it across 1.5 minutes, one attempt every 100 ms.
    for (let at = t0; at < t0 + 90_000; at += 100) if (limiter.take('b', 10, MINUTE, 1, at).allowed) allowed++;
    // Burst of 10 plus one per 6 s over 90 s: 10 + 14 = 24 at most (a fixed window would allow 20 in the first 61 s).
    expect(allowed).toBeLessThanOrEqual(25);
    // A fixed window starting at t0 would take 10 just before t0 + 60 s and 10 more just
    // after: 20 within 200 ms. GCRA takes the 10, then one per 6 s.
    const fresh = new MemoryLimiter();
    let nearBoundary = 0;
    for (let at = t0 + 59_900; at <= t0 + 60_100; at += 10) if (fresh.take('c', 10, MINUTE, 1, at).allowed) nearBoundary++;
    expect(nearBoundary).toBe(10);
  });

  it('reports remaining and the reset time in Unix seconds', () => {
    const limiter = new MemoryLimiter();
    const t0 = 1_700_000_000_000;
    const first = limiter.take('d', 4, MINUTE, 1, t0);
    expect(first).toMatchObject({ allowed: true, limit: 4, remaining: 3, resetAtUnixSec: Math.ceil((t0 + 15_000) / 1000) });
    expect(limiter.peek('d', 4, MINUTE, t0).remaining).toBe(3);
    expect(limiter.peek('d', 4, MINUTE, t0 + 15_000).remaining).toBe(4);
  });

  it('weighs costs (tokens) and lets usage known afterwards push the limit', () => {
    const limiter = new MemoryLimiter();
    const t0 = 2_000_000;
    expect(limiter.take('e', 100, MINUTE, 60, t0).allowed).toBe(true);
    limiter.charge('e', 100, MINUTE, 30, t0);
    expect(limiter.take('e', 100, MINUTE, 20, t0).allowed).toBe(false);
    expect(limiter.take('e', 100, MINUTE, 10, t0).allowed).toBe(true);
    // A request bigger than the whole limit can never pass; it is told to wait.
    const huge = limiter.take('f', 100, MINUTE, 101, t0);
    expect(huge.allowed).toBe(false);
    expect(huge.retryAfterSec).toBeGreaterThanOrEqual(1);
  });

  it('keeps keys apart', () => {
    const limiter = new MemoryLimiter();
    expect(limiter.take('x', 1, MINUTE, 1, 0).allowed).toBe(true);
    expect(limiter.take('x', 1, MINUTE, 1, 0).allowed).toBe(false);
    expect(limiter.take('y', 1, MINUTE, 1, 0).allowed).toBe(true);
  });
});
