// Per-deployment circuit breaker. A deployment that keeps failing is taken out of the
// rotation for a cooldown instead of costing every request a failed attempt; after the
// cooldown one real request goes through as a probe. The probe's success closes the
// circuit; its failure opens it again for twice as long (up to a ceiling).
//
//   closed ──(failures in a row)──> open ──(cooldown over)──> half-open ──(probe ok)──> closed
//                                     ^─────────────(probe failed)───────────┘

export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  /** Failures in a row that open the circuit. */
  failureThreshold: number;
  /** First cooldown; doubled after each failed probe. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** The clock, pinned by tests. */
  now?: () => number;
}

export class CircuitBreaker {
  private failuresInARow = 0;
  private openUntil = 0;
  private cooldownMs: number;
  private probing = false;
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    this.cooldownMs = options.cooldownMs;
    this.now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    if (this.openUntil === 0) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half_open';
  }

  /** May a request go to this deployment now? */
  allows(): boolean {
    if (this.openUntil === 0) return true;
    return !this.probing && this.now() >= this.openUntil;
  }

  /** A request is going out; in half-open state it is the probe. */
  onAttempt(): void {
    if (this.openUntil !== 0) this.probing = true;
  }

  onSuccess(): void {
    this.failuresInARow = 0;
    this.openUntil = 0;
    this.probing = false;
    this.cooldownMs = this.options.cooldownMs;
  }

  onFailure(): void {
    this.failuresInARow++;
    if (this.probing) {
      // The probe failed: longer this time.
      this.probing = false;
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.options.maxCooldownMs);
      this.openUntil = this.now() + this.cooldownMs;
    } else if (this.openUntil === 0 && this.failuresInARow >= this.options.failureThreshold) {
      this.openUntil = this.now() + this.cooldownMs;
    }
  }

  /** The upstream asked for a pause (429 Retry-After): honour it, within the ceiling. */
  pauseFor(ms: number): void {
    const until = this.now() + Math.min(ms, this.options.maxCooldownMs);
    this.probing = false;
    if (until > this.openUntil) this.openUntil = until;
  }

  /** The attempt ended without a verdict on the deployment's health (the client left). */
  onInconclusive(): void {
    this.probing = false;
  }
}
