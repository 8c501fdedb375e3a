// The admission in one process: limits in GCRA limiters, credits in the MemoryCreditBook,
// spend limits (keys', members', organisations') in MemorySpend, settled usage in the UsageWriter. A request is
// admitted against its counters (counters.ts); everything stays synchronous while the
// account (and its limits' spending) is loaded, so the request path awaits nothing.
import type { RateLimitState } from '../errors.js';
import type { AccountLimits, LimitsSnapshot, TakenRequests } from '../limits/account-limits.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import type { AdmissionHealth, AdmissionService, Decision, Pass, Principal, Released, RequestPlan, Settlement } from './admission.js';
import { admitAll, settleAll, type Counter } from './counters.js';
import type { SpendHold, MemorySpend } from './memory-spend.js';
import type { SpendLimit } from './spend-limit.js';
import type { BalanceSnapshot, MemoryCreditBook, Reservation } from './reservations.js';
import type { Tier } from './tiers.js';
import type { UsageWriteObserver, UsageWriter } from './usage-writer.js';

export class MemoryAdmission implements AdmissionService {
  constructor(
    private readonly limitsOf: AccountLimits,
    readonly credits: MemoryCreditBook,
    private readonly writer: UsageWriter,
    private readonly spend: MemorySpend,
  ) {}

  takeRequest({ accountId, tier }: Principal): RateLimitState {
    return this.limitsOf.takeRequest(accountId, tier);
  }

  takeKeyRequest(keyId: string, rpm: number): RateLimitState {
    return this.limitsOf.takeKeyRequest(keyId, rpm);
  }

  giveBackRequests(taken: TakenRequests): void {
    this.limitsOf.giveBackRequests(taken);
  }

  open(principal: Principal): Pass {
    return new MemoryPass(this.limitsOf, this.credits, this.writer, this.spend, principal);
  }

  snapshot(accountId: string): Promise<BalanceSnapshot> {
    return this.credits.snapshot(accountId);
  }

  spent(limit: SpendLimit): MaybePromise<number> {
    return this.spend.spent(limit);
  }

  limits({ accountId, tier }: Principal): LimitsSnapshot {
    return this.limitsOf.snapshot(accountId, tier);
  }

  balanceChanged(accountId: string): Promise<void> {
    return this.credits.reload(accountId);
  }

  async start(): Promise<void> {
    this.writer.start();
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  close(): Promise<void> {
    return this.writer.close();
  }

  health(): AdmissionHealth {
    return { pendingUsage: this.writer.pending };
  }

  observeUsageWrites(observer: UsageWriteObserver): void {
    this.writer.observer = observer;
  }
}

class MemoryPass implements Pass {
  private readonly releaseSlot: () => void;
  private readonly accountId: string;
  private readonly tier: Tier;
  private readonly spendLimits: readonly SpendLimit[];
  private counters: Counter[] | undefined;
  private credit: AccountCreditCounter | undefined;
  private released = false;

  constructor(
    private readonly limits: AccountLimits,
    private readonly credits: MemoryCreditBook,
    private readonly writer: UsageWriter,
    private readonly spend: MemorySpend,
    { accountId, tier, spendLimits = [] }: Principal,
  ) {
    this.accountId = accountId;
    this.tier = tier;
    this.spendLimits = spendLimits;
    // First, before the body is even validated: the slot bounds the work one account can
    // have running, counting long prompts included.
    this.releaseSlot = limits.acquireSlot(accountId, tier);
  }

  get reservedMicros(): number {
    return this.credit?.reservation?.amountMicros ?? 0;
  }

  requireCredit(): MaybePromise<void> {
    let check = this.credits.requireCredit(this.accountId);
    for (const limit of this.spendLimits) check = andThen(check, () => this.spend.requireCredit(limit));
    return check;
  }

  /** The counters in order: tokens per minute, the account's credit, then its limits on spending (so the account's 402 comes first, as in shared mode). */
  admit({ promptTokens, worstCaseMicros }: RequestPlan): MaybePromise<Decision> {
    const credit = new AccountCreditCounter(this.credits, this.accountId, worstCaseMicros);
    const counters: Counter[] = [new TokensCounter(this.limits, this.accountId, this.tier, promptTokens), credit];
    for (const limit of this.spendLimits) counters.push(new SpendCounter(this.spend, limit, worstCaseMicros));
    return andThen(admitAll(counters), () => {
      this.counters = counters;
      this.credit = credit;
      return { reservation: credit.reservation! };
    });
  }

  refuse(): void {
    if (this.counters && !this.released) for (const counter of this.counters) counter.giveBack();
    this.counters = undefined;
    this.releaseSlot();
  }

  /** The balance after the charge: exact, as this process holds every charge of the account. */
  release(settlement: Settlement): Released {
    this.released = true;
    if (this.counters) settleAll(this.counters, settlement);
    this.releaseSlot();
    return { balanceMicros: this.credit?.balanceMicros, durable: this.writer.enqueue(settlement.record) };
  }
}

/** The prompt against tokens per minute; the output is added once known, so a long answer delays the next requests instead of failing this one. */
class TokensCounter implements Counter {
  constructor(
    private readonly limits: AccountLimits,
    private readonly accountId: string,
    private readonly tier: Tier,
    private readonly promptTokens: number,
  ) {}

  load(): void {}

  take(): void {
    this.limits.takeTokens(this.accountId, this.tier, this.promptTokens);
  }

  giveBack(): void {
    this.limits.refundTokens(this.accountId, this.tier, this.promptTokens);
  }

  settle({ completionTokens }: Settlement): void {
    this.limits.chargeTokens(this.accountId, this.tier, completionTokens);
  }
}

/** The worst case reserved against the account's balance; settled, the cost charged and what it could not pay set as the record's shortfall. */
class AccountCreditCounter implements Counter {
  reservation: Reservation | undefined;
  balanceMicros: number | undefined;

  constructor(
    private readonly credits: MemoryCreditBook,
    private readonly accountId: string,
    private readonly amountMicros: number,
  ) {}

  load(): MaybePromise<void> {
    return this.credits.load(this.accountId);
  }

  take(): void {
    this.reservation = this.credits.reserve(this.accountId, this.amountMicros);
  }

  giveBack(): void {
    if (this.reservation) this.credits.settle(this.reservation, 0);
  }

  settle({ record }: Settlement): void {
    const settled = this.credits.settle(this.reservation!, record.costMicros);
    record.shortfallMicros = record.costMicros - settled.chargedMicros;
    this.balanceMicros = settled.balanceMicros;
  }
}

/** The worst case held against a limit on spending; settled, what the account was charged counted in the limit's window. */
class SpendCounter implements Counter {
  private hold: SpendHold | undefined;

  constructor(
    private readonly spend: MemorySpend,
    private readonly limit: SpendLimit,
    private readonly amountMicros: number,
  ) {}

  load(): MaybePromise<void> {
    return andThen(this.spend.load(this.limit), () => undefined);
  }

  take(): void {
    this.hold = this.spend.hold(this.limit, this.amountMicros);
  }

  giveBack(): void {
    if (this.hold) this.spend.cancel(this.hold);
    this.hold = undefined;
  }

  settle({ record }: Settlement): void {
    if (this.hold) this.spend.settle(this.hold, record);
  }
}
