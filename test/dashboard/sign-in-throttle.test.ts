import { describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/errors.js';
import { FailureThrottle } from '../../src/dashboard/sign-in-throttle.js';

const RULE = { limit: 5, windowMs: 15 * 60_000 };

describe('the failure throttle', () => {
  it('allows 5 failures in 15 minutes, then refuses until the oldest leaves the window', () => {
    const throttle = new FailureThrottle();
    const start = 1_000_000;
    for (let i = 0; i < 5; i++) {
      throttle.assertAllowed('k', RULE, start + i * 60_000);
      throttle.recordFailure('k', RULE, start + i * 60_000);
    }
    let refused: unknown;
    try {
      throttle.assertAllowed('k', RULE, start + 5 * 60_000);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(RateLimitedError);
    // The first failure leaves the window at start + 15 min: 10 minutes from now.
    expect((refused as RateLimitedError).retryAfterSec).toBe(600);
    // Unlike a continuously refilling limiter, still refused after 3 more minutes.
    expect(() => throttle.assertAllowed('k', RULE, start + 8 * 60_000)).toThrow(RateLimitedError);
    expect(() => throttle.assertAllowed('k', RULE, start + 15 * 60_000)).not.toThrow();
    expect(() => throttle.assertAllowed('other', RULE, start + 5 * 60_000)).not.toThrow();
  });

  it('forget clears a key', () => {
    const throttle = new FailureThrottle();
    for (let i = 0; i < 5; i++) throttle.recordFailure('k', RULE, 0);
    expect(() => throttle.assertAllowed('k', RULE, 1)).toThrow(RateLimitedError);
    throttle.forget('k');
    expect(() => throttle.assertAllowed('k', RULE, 1)).not.toThrow();
  });
});
