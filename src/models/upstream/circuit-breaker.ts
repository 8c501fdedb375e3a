// Per-deployment circuit breaker. A deployment that keeps failing is taken out of the
// rotation for a cooldown instead of costing every request a failed attempt; after the
// cooldown one real request goes through as a probe. The probe's success closes the
// circuit; its failure opens it again for twice as long (up to a ceiling).
//
//   closed ──(failures in a row)──> open ──(cooldown over)──> half-open ──(probe ok)──> closed
//                                     ^─────────────(probe failed)───────────┘
//
// A 500 is not always the deployment's fault: a server answers 500 for some requests it
// cannot serve (llama.cpp, when the model's output fails its tool-call parser, or an
// embedding input is larger than its batch). So a 500 counts as a failure only as a rate
// of different requests: within SERVER_ERROR_WINDOW_MS, when `failureThreshold` distinct
// request bodies failed and they are at least half of the attempts made. A body that
// failed already in the window (a client's retries of one request) counts once.

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

const SERVER_ERROR_WINDOW_MS = 60_000;
/** At least this share of the window's attempts failed with 500 on different requests. */
const SERVER_ERROR_RATE = 0.5;

export class CircuitBreaker {
  private failuresInARow = 0;
  /**
   * Attempts in the window, counted cheaply on every request: those since `bucketStart`, and
   * those of the window before it (the window is read as both, an upper bound of the last
   * minute's; a rate against it never overstates the failures).
   */
  private bucketStart = 0;
  private attemptsNow = 0;
  private attemptsBefore = 0;
  /** Bodies that failed with 500 in the window → when they last did. */
  private readonly serverErrors = new Map<string, number>();
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
    this.rollAttempts(this.now());
    this.attemptsNow++;
  }

  private rollAttempts(now: number): void {
    if (now - this.bucketStart < SERVER_ERROR_WINDOW_MS) return;
    this.attemptsBefore = now - this.bucketStart < 2 * SERVER_ERROR_WINDOW_MS ? this.attemptsNow : 0;
    this.attemptsNow = 0;
    this.bucketStart = now;
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

  /**
   * The deployment answered 500 to the request named `fingerprint`: a failure only when
   * different requests keep failing (see the header), else no verdict either way.
   */
  onServerError(fingerprint: string): void {
    const now = this.now();
    const since = now - SERVER_ERROR_WINDOW_MS;
    for (const [body, at] of this.serverErrors) if (at < since) this.serverErrors.delete(body);
    this.rollAttempts(now);
    const isRetry = this.serverErrors.has(fingerprint);
    this.serverErrors.set(fingerprint, now);
    const distinct = this.serverErrors.size;
    const attempts = this.attemptsNow + this.attemptsBefore;
    if (!isRetry && distinct >= this.options.failureThreshold && distinct >= SERVER_ERROR_RATE * attempts) return this.onFailure();
    this.onInconclusive();
  }

  /** The attempt ended without a verdict on the deployment's health (the client left). */
  onInconclusive(): void {
    this.probing = false;
  }
}
