import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/errors.js';
import { MemoryFailureThrottle } from '../../src/web-session/sign-in-throttle.js';

const MINUTE_MS = 60_000;

describe('the failure throttle', () => {
  it('allows 5 failures in 15 minutes, then refuses until the oldest leaves the window', () => {
    const throttle = new MemoryFailureThrottle(5, 15 * MINUTE_MS);
    const start = 1_000_000;
    for (let i = 0; i < 5; i++) {
      throttle.assertAllowed('k', start + i * MINUTE_MS);
      throttle.recordFailure('k', start + i * MINUTE_MS);
    }
    let refused: unknown;
    try {
      throttle.assertAllowed('k', start + 5 * MINUTE_MS);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RateLimitedError);
    // The first failure leaves the window at start + 15 min: 10 minutes from now.
    expect((refused as RateLimitedError).retryAfterSec).toBe(600);
    // Unlike a continuously refilling limiter, still refused after 3 more minutes.
    expect(() => throttle.assertAllowed('k', start + 8 * MINUTE_MS)).toThrow(RateLimitedError);
    expect(() => throttle.assertAllowed('k', start + 15 * MINUTE_MS)).not.toThrow();
    expect(() => throttle.assertAllowed('other', start + 5 * MINUTE_MS)).not.toThrow();
  });

  it('forget clears a key', () => {
    const throttle = new MemoryFailureThrottle(5, 15 * MINUTE_MS);
    for (let i = 0; i < 5; i++) throttle.recordFailure('k', 0);
    expect(() => throttle.assertAllowed('k', 1)).toThrow(RateLimitedError);
    throttle.forget('k');
    expect(() => throttle.assertAllowed('k', 1)).not.toThrow();
  });
});
