import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/models/upstream/circuit-breaker.js';

function breaker(): { breaker: CircuitBreaker; advance(ms: number): void } {
  let now = 1_000_000;
  return {
    breaker: new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1000, maxCooldownMs: 4000, now: () => now }),
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('circuit breaker', () => {
  it('stays closed below the threshold, and a success resets the count', () => {
    const { breaker: b } = breaker();
    b.onFailure();
    b.onFailure();
    b.onSuccess();
    b.onFailure();
    b.onFailure();
    expect(b.state).toBe('closed');
    expect(b.allows()).toBe(true);
  });

  it('opens after the threshold of failures in a row and refuses until the cooldown is over', () => {
    const { breaker: b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    expect(b.state).toBe('open');
    expect(b.allows()).toBe(false);
    advance(999);
    expect(b.allows()).toBe(false);
    advance(1);
    expect(b.state).toBe('half_open');
    expect(b.allows()).toBe(true);
  });

  it('lets exactly one probe through when half-open; its success closes the circuit', () => {
    const { breaker: b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    advance(1000);
    b.onAttempt();
    expect(b.allows()).toBe(false); // the probe is in flight
    b.onSuccess();
    expect(b.state).toBe('closed');
    expect(b.allows()).toBe(true);
  });

  it('a failed probe opens it again for twice as long, up to the ceiling', () => {
    const { breaker: b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    const cooldowns: number[] = [];
    for (let round = 0; round < 4; round++) {
      // Find how long this cooldown lasts, in 100 ms steps.
      let waited = 0;
      while (!b.allows()) {
        advance(100);
        waited += 100;
      }
      cooldowns.push(waited);
      b.onAttempt();
      b.onFailure();
    }
    expect(cooldowns).toEqual([1000, 2000, 4000, 4000]);
    // And a success after all that starts again from the first cooldown.
    advance(4000);
    b.onAttempt();
    b.onSuccess();
    for (let i = 0; i < 3; i++) b.onFailure();
    advance(1000);
    expect(b.allows()).toBe(true);
  });

  it('a probe the client abandoned lets the next request probe', () => {
    const { breaker: b, advance } = breaker();
    for (let i = 0; i < 3; i++) b.onFailure();
    advance(1000);
    b.onAttempt();
    expect(b.allows()).toBe(false);
    b.onInconclusive();
    expect(b.allows()).toBe(true);
  });

  it("honours an upstream's Retry-After pause, capped by the ceiling", () => {
    const { breaker: b, advance } = breaker();
    b.pauseFor(60_000);
    expect(b.state).toBe('open');
    advance(3999);
    expect(b.allows()).toBe(false);
    advance(1);
    expect(b.allows()).toBe(true);
  });
});
