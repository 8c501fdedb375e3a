// The Admission of shared mode: a chat request is admitted in one Redis round trip (slot,
// requests and tokens per minute, reservation) and settled in another after the answer;
// usage reaches the store through the Redis stream.
import type { AdmissionHealth, AdmissionService, Decision, Pass, Principal, Released, RequestPlan, Settlement } from '../billing/admission.js';
import { creditWindowOf, type SpendLimit } from '../billing/spend-limit.js';
import type { BalanceSnapshot } from '../billing/reservations.js';
import type { UsageWriteObserver } from '../billing/usage-writer.js';
import type { Tier } from '../billing/tiers.js';
import { InsufficientCreditsError, type RateLimitState } from '../errors.js';
import type { TakenRequests } from '../limits/account-limits.js';
import type { LimitsSnapshot } from '../limits/account-limits.js';
import { isoNow } from '../clock.js';
import { AccountCreditRefusal, SpendLimitRefusal } from './credit-refusals.js';
import type { SharedReservation, SharedState } from './shared-state.js';
import type { UsageStreamWriter } from './usage-stream-writer.js';

/** Exhausted limits remembered at most; beyond, the memory starts over (each then costs one round trip to find again). */
const MAX_EXHAUSTED_LIMITS = 100_000;

function exhaustionKey({ id, limit }: SpendLimit): string {
  return `${id}|${limit.amountMicros}|${limit.period}`;
}

export class SharedAdmission implements AdmissionService {
  /**
   * Accounts whose last admission found their balance spent, until it changes: they get
   * their 402 before any counting without a round trip. Not an account whose credits are
   * only held: its running requests settle for less than they hold, and no change event
   * follows a settlement.
   */
  readonly exhausted = new Set<string>();
  /**
   * The same for limits on spending: the window in which the limit was all spent, by the
   * limit as it was (its id, amount and period: a changed limit is another entry). Spending
   * only grows within a window.
   */
  private readonly limitsExhausted = new Map<string, string>();

  constructor(
    readonly state: SharedState,
    private readonly writer: UsageStreamWriter,
    private readonly onError: (err: unknown) => void,
    /** Closes the Redis connections, once the last usage is in the store. */
    private readonly disconnect: () => void = () => undefined,
  ) {}

  /** A metered route's request per minute is taken with its admission, in the same round trip. */
  takeRequest({ accountId, tier }: Principal, admitsRequest: boolean): Promise<RateLimitState> | undefined {
    return admitsRequest ? undefined : this.state.takeRequest(accountId, tier);
  }

  takeKeyRequest(keyId: string, rpm: number): Promise<RateLimitState> {
    return this.state.takeKeyRequest(keyId, rpm);
  }

  giveBackRequests(taken: TakenRequests): Promise<void> {
    return this.state.giveBackRequests(taken);
  }

  open({ accountId, tier, spendLimits = [] }: Principal): Pass {
    return new SharedPass(this, accountId, tier, spendLimits);
  }

  /** The limit was found all spent in the current window: refuse it without a round trip until the window ends. */
  markSpent(limit: SpendLimit): void {
    if (this.limitsExhausted.size >= MAX_EXHAUSTED_LIMITS) this.limitsExhausted.clear();
    this.limitsExhausted.set(exhaustionKey(limit), creditWindowOf(limit.limit.period, isoNow()));
  }

  isSpent(limit: SpendLimit): boolean {
    return this.limitsExhausted.get(exhaustionKey(limit)) === creditWindowOf(limit.limit.period, isoNow());
  }

  snapshot(accountId: string): Promise<BalanceSnapshot> {
    return this.state.snapshot(accountId);
  }

  spent(limit: SpendLimit): Promise<number> {
    return this.state.spend.spent(limit);
  }

  limits({ accountId, tier }: Principal): Promise<LimitsSnapshot> {
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

  /** Settlements kept through an outage tried again (after any try running now), then what waits in the stream written. */
  async flush(): Promise<void> {
    await this.state.retryUnsettled();
    await this.writer.flush();
  }

  async close(): Promise<void> {
    // A last try for settlements kept through an outage; what still fails is lost with the process.
    if (this.state.unsettledCount > 0) await this.state.retryUnsettled();
    this.state.stop();
    try {
      await this.writer.close();
    } finally {
      this.disconnect();
    }
  }

  observeUsageWrites(observer: UsageWriteObserver): void {
    this.writer.observer = observer;
  }

  /** For /metrics: whether the command connection is up, and what waits for it (usage waits in the Redis stream, not here). */
  health(): AdmissionHealth {
    return { pendingUsage: 0, shared: { redisUp: this.state.redis.status === 'ready', unsettled: this.state.unsettledCount } };
  }

  ping(): Promise<unknown> {
    return this.state.redis.ping();
  }

  reportError(err: unknown): void {
    this.onError(err);
  }
}

class SharedPass implements Pass {
  private reservation: SharedReservation | undefined;

  constructor(
    private readonly admission: SharedAdmission,
    private readonly accountId: string,
    private readonly tier: Tier,
    private readonly spendLimits: readonly SpendLimit[],
  ) {}

  get reservedMicros(): number {
    return this.reservation?.amountMicros ?? 0;
  }

  requireCredit(): void {
    if (this.admission.exhausted.has(this.accountId)) throw new InsufficientCreditsError(undefined, 0);
    const spent = this.spendLimits.find((limit) => this.admission.isSpent(limit));
    if (spent !== undefined) throw new InsufficientCreditsError(undefined, 0, { reason: spent.reason });
  }

  async admit({ promptTokens, worstCaseMicros }: RequestPlan): Promise<Decision> {
    try {
      this.reservation = await this.admission.state.admit({ accountId: this.accountId, tier: this.tier, promptTokens, worstCaseMicros, takeRequest: true, spendLimits: this.spendLimits });
    } catch (err) {
      if (err instanceof SpendLimitRefusal) {
        if (err.spent) this.admission.markSpent(err.limit);
      } else if (err instanceof AccountCreditRefusal && err.spent) this.admission.exhausted.add(this.accountId);
      throw err;
    }
    const { leaseId: id, accountId, amountMicros, requests } = this.reservation;
    return { reservation: { id, accountId, amountMicros }, requests };
  }

  refuse(): void {
    if (this.reservation) return;
    // Refused before admission (422, 404...): the request still counts against requests per
    // minute, taken now off the response's path.
    this.reservation = undefined;
    this.admission.state.takeRequest(this.accountId, this.tier).catch((err: unknown) => {
      if (!(err instanceof Error && err.name === 'RateLimitedError')) this.admission.reportError(err);
    });
  }

  /**
   * The balance after the charge as of the admission: the headers go before the settlement
   * (only the last byte waits for it), so another request of the account settled meanwhile,
   * on any instance, is not counted in it.
   */
  release({ completionTokens, record }: Settlement): Released {
    const reservation = this.reservation;
    if (!reservation) return { balanceMicros: undefined, durable: undefined };
    // Durable once in Redis. When Redis cannot be reached the settlement is kept and retried,
    // and the answer goes on: the charge then waits in this process's memory.
    const durable = this.admission.state.settle(reservation, this.tier, completionTokens, record).catch((err: unknown) => this.admission.reportError(err));
    return { balanceMicros: Math.max(0, reservation.balanceMicros - record.costMicros), durable };
  }
}
