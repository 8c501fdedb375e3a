// The Gate of shared mode: a chat request is admitted in one Redis round trip (slot,
// requests and tokens per minute, reservation) and settled in another after the answer;
// usage reaches the store through the Redis stream.
import type { Gate, Pass } from '../billing/gate.js';
import type { BalanceSnapshot } from '../billing/reservations.js';
import type { Tier } from '../billing/tiers.js';
import { InsufficientCreditsError, type RateLimitState } from '../errors.js';
import type { LimitsSnapshot } from '../limits/account-limits.js';
import type { UsageRecord } from '../store/store.js';
import type { SharedAdmission, SharedState } from './shared-state.js';
import type { UsageStreamWriter } from './usage-stream-writer.js';

export class SharedGate implements Gate {
  readonly requestsAtAdmission = true;
  /**
   * Accounts whose last admission found nothing available, until their balance changes:
   * they get their 402 before any counting without a round trip.
   */
  readonly exhausted = new Set<string>();

  constructor(
    readonly state: SharedState,
    private readonly writer: UsageStreamWriter,
    private readonly onError: (err: unknown) => void,
    /** Closes the Redis connections, once the last usage is in the store. */
    private readonly disconnect: () => void = () => undefined,
  ) {}

  takeRequest(accountId: string, tier: Tier): Promise<RateLimitState> {
    return this.state.takeRequest(accountId, tier);
  }

  open(accountId: string, tier: Tier): Pass {
    return new SharedPass(this, accountId, tier);
  }

  snapshot(accountId: string): Promise<BalanceSnapshot> {
    return this.state.snapshot(accountId);
  }

  limits(accountId: string, tier: Tier): Promise<LimitsSnapshot> {
    return this.state.limits(accountId, tier);
  }

  async balanceChanged(accountId: string): Promise<void> {
    this.exhausted.delete(accountId);
    await this.state.refreshBalance(accountId);
  }

  async start(): Promise<void> {
    this.state.start();
    await this.writer.start();
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  async close(): Promise<void> {
    this.state.stop();
    try {
      await this.writer.close();
    } finally {
      this.disconnect();
    }
  }

  ping(): Promise<unknown> {
    return this.state.redis.ping();
  }

  get pendingUsage(): number {
    return 0; // waiting in the Redis stream, not in this process
  }

  reportError(err: unknown): void {
    this.onError(err);
  }
}

class SharedPass implements Pass {
  private admission: SharedAdmission | undefined;

  constructor(
    private readonly gate: SharedGate,
    private readonly accountId: string,
    private readonly tier: Tier,
  ) {}

  get reservedMicros(): number {
    return this.admission?.amountMicros ?? 0;
  }

  requireCredit(): void {
    if (this.gate.exhausted.has(this.accountId)) throw new InsufficientCreditsError(0, 0);
  }

  async admit(promptTokens: number, worstCaseMicros: number): Promise<RateLimitState> {
    try {
      this.admission = await this.gate.state.admit({ accountId: this.accountId, tier: this.tier, promptTokens, worstCaseMicros, takeRequest: true });
    } catch (err) {
      if (err instanceof InsufficientCreditsError && err.availableMicros <= 0) this.gate.exhausted.add(this.accountId);
      throw err;
    }
    return this.admission.requests;
  }

  refuse(): void {
    if (this.admission) return;
    // Refused before admission (422, 404...): the request still counts against requests per
    // minute, taken now off the response's path.
    this.admission = undefined;
    this.gate.state.takeRequest(this.accountId, this.tier).catch((err: unknown) => {
      if (!(err instanceof Error && err.name === 'RateLimitedError')) this.gate.reportError(err);
    });
  }

  settle(completionTokens: number, record: UsageRecord): void {
    const admission = this.admission;
    if (!admission) return;
    this.gate.state.settle(admission, this.tier, completionTokens, record).catch((err: unknown) => this.gate.reportError(err));
  }
}
