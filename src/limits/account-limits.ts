// The tier's limits applied to an account: requests per minute and tokens per minute
// (GCRA, limiter.ts) and concurrent requests (a counter). Everything is in memory here;
// the Limiter interface is the seam for a shared (Redis) implementation.
import type { Tier } from '../billing/tiers.js';
import { RateLimitedError, type RateLimitState } from '../errors.js';
import type { Limiter, RateLimitDecision } from './limiter.js';

/** The requests per minute a request took before it was admitted: its account's, its key's. */
export interface TakenRequests {
  account?: { accountId: string; tier: Tier };
  key?: { id: string; rpm: number };
}

const MINUTE_MS = 60_000;

export interface LimitsSnapshot {
  requests: RateLimitDecision;
  tokens: RateLimitDecision;
  concurrency: { limit: number; inUse: number };
}

export class AccountLimits {
  private readonly inFlight = new Map<string, number>();

  /**
   * One limiter per kind of limit, keyed by account id: the id string comes from the
   * cached account, so a lookup needs no new key string per request.
   */
  constructor(
    private readonly requests: Limiter,
    private readonly tokens: Limiter,
  ) {}

  /** One request of the tier's requests-per-minute, or 429. Returns the state for headers. */
  takeRequest(accountId: string, tier: Tier): RateLimitState {
    return enforce(this.requests.take(accountId, tier.config.rpm, MINUTE_MS, 1));
  }

  /** A key's own requests per minute, in the same limiter: key ids and account ids never collide. */
  takeKeyRequest(keyId: string, rpm: number): RateLimitState {
    const decision = this.requests.take(keyId, rpm, MINUTE_MS, 1);
    if (!decision.allowed) throw new RateLimitedError(decision, decision.retryAfterSec, 'key_rate_limit');
    return decision;
  }

  /** Requests taken by a request then refused, given back. */
  giveBackRequests(taken: TakenRequests): void {
    if (taken.account) this.requests.charge(taken.account.accountId, taken.account.tier.config.rpm, MINUTE_MS, -1);
    if (taken.key) this.requests.charge(taken.key.id, taken.key.rpm, MINUTE_MS, -1);
  }

  peekRequests(accountId: string, tier: Tier): RateLimitState {
    return this.requests.peek(accountId, tier.config.rpm, MINUTE_MS);
  }

  /**
   * A concurrency slot, or 429. The caller must call the returned release exactly once
   * (it is safe to call more often).
   */
  acquireSlot(accountId: string, tier: Tier): () => void {
    const inUse = this.inFlight.get(accountId) ?? 0;
    const limit = tier.config.concurrency;
    if (inUse >= limit) {
      throw new RateLimitedError({ limit, remaining: 0, resetAtUnixSec: Math.ceil(Date.now() / 1000) + 1 }, 1);
    }
    this.inFlight.set(accountId, inUse + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.inFlight.get(accountId) ?? 1) - 1;
      if (now <= 0) this.inFlight.delete(accountId);
      else this.inFlight.set(accountId, now);
    };
  }

  /**
   * Tokens per minute: the prompt must fit now; the output is added once known
   * (chargeTokens), so a long answer delays the next requests instead of failing this one.
   */
  takeTokens(accountId: string, tier: Tier, promptTokens: number): void {
    enforce(this.tokens.take(accountId, tier.config.tpm, MINUTE_MS, promptTokens));
  }

  /** Returns prompt tokens taken by a request that was then refused (402, say). */
  refundTokens(accountId: string, tier: Tier, promptTokens: number): void {
    if (promptTokens > 0) this.tokens.charge(accountId, tier.config.tpm, MINUTE_MS, -promptTokens);
  }

  chargeTokens(accountId: string, tier: Tier, completionTokens: number): void {
    if (completionTokens > 0) this.tokens.charge(accountId, tier.config.tpm, MINUTE_MS, completionTokens);
  }

  snapshot(accountId: string, tier: Tier): LimitsSnapshot {
    return {
      requests: this.requests.peek(accountId, tier.config.rpm, MINUTE_MS),
      tokens: this.tokens.peek(accountId, tier.config.tpm, MINUTE_MS),
      concurrency: { limit: tier.config.concurrency, inUse: this.inFlight.get(accountId) ?? 0 },
    };
  }
}

function enforce(decision: RateLimitDecision): RateLimitState {
  if (!decision.allowed) throw new RateLimitedError(decision, decision.retryAfterSec);
  return decision;
}
