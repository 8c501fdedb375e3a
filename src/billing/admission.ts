// The admission port and its in-memory implementation (one process: limits in GCRA
// limiters, credits in the MemoryCreditBook, settled usage in the UsageWriter). It stays
// synchronous while the account is loaded, so the request path awaits nothing.
import type { RateLimitState } from '../errors.js';
import type { AccountLimits, LimitsSnapshot, TakenRequests } from '../limits/account-limits.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import type { UsageRecord } from '../store/store.js';
import type { LimitedKey } from './key-credit.js';
import type { KeyHold, MemoryKeySpend } from './key-spend.js';
import type { BalanceSnapshot, MemoryCreditBook, Reservation } from './reservations.js';
import type { Tier } from './tiers.js';
import type { UsageWriteObserver, UsageWriter } from './usage-writer.js';

/** Whom a request is admitted for. */
export interface Principal {
  accountId: string;
  tier: Tier;
  /** The request's key, when it has a credit limit of its own (absent: nothing is looked up for it). */
  key?: LimitedKey;
}

/** What a request will use at most, known once its prompt is counted. */
export interface RequestPlan {
  promptTokens: number;
  worstCaseMicros: number;
}

/** One admission decision: the limits taken, the slot held and the credit reserved. */
export interface Decision {
  reservation: Reservation;
  /** Requests per minute after this one, when taken at admission (shared mode). */
  requests?: RateLimitState;
}

/**
 * What a finished request used; `record.costMicros` is charged, from its reservation and
 * beyond it from the balance available. The pass sets `record.shortfallMicros` to what
 * the account could not pay.
 */
export interface Settlement {
  completionTokens: number;
  record: UsageRecord;
}

/**
 * The admission port: where limits and credits are decided, in this process
 * (MemoryAdmission) or in Redis (shared/shared-admission.ts). A chat request opens a Pass
 * before its body is looked at, is admitted in one decision once its prompt is counted,
 * and is released with its usage after the model.
 */
export interface Admission {
  /**
   * True when a chat request's request-per-minute is taken with its admission (one round
   * trip), so the API's onRequest hook leaves it alone for that route.
   */
  readonly requestsAtAdmission: boolean;
  /** One request of the tier's requests per minute, or 429. */
  takeRequest(principal: Principal): MaybePromise<RateLimitState>;
  /** One request of a key's own requests per minute (its controls), or 429 with reason key_rate_limit. */
  takeKeyRequest(keyId: string, rpm: number): MaybePromise<RateLimitState>;
  /** Gives back what takeRequest and takeKeyRequest took for a request then refused: a refusal costs no limit. */
  giveBackRequests(taken: TakenRequests): MaybePromise<void>;
  /** A chat request starts (in memory: its concurrency slot, or 429). */
  open(principal: Principal): Pass;
  snapshot(accountId: string): Promise<BalanceSnapshot>;
  /** What a key spent in its credit limit's current window (the dashboard shows it against the limit). */
  keySpent(key: LimitedKey): MaybePromise<number>;
  limits(principal: Principal): MaybePromise<LimitsSnapshot>;
  /** The stored balance changed (a grant, a redemption, another instance): read it again. */
  balanceChanged(accountId: string): Promise<void>;
  start(): Promise<void>;
  /** Writes settled usage to the store now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** Settled records not yet in the store, for /metrics. */
  readonly pendingUsage: number;
  /** Who is told of usage batches written and of charges cut at the balance. */
  observeUsageWrites(observer: UsageWriteObserver): void;
  /** Whether the shared state answers (shared mode only), for /readyz. */
  ping?(): Promise<unknown>;
}

/** One chat request's hold on its account's limits and credits, from open to release. */
export interface Pass {
  /**
   * 402 when nothing is available (or nothing is left of the key's credit limit), before a
   * request does costly work (counting a long prompt).
   */
  requireCredit(): MaybePromise<void>;
  /**
   * The decision: the prompt against tokens per minute and the worst case reserved, against
   * the account's balance and the key's credit limit (in shared mode also the slot and the
   * request per minute, in one round trip), or 429/402 having taken nothing.
   */
  admit(plan: RequestPlan): MaybePromise<Decision>;
  /** What admit reserved. */
  readonly reservedMicros: number;
  /** Refused before the model: give back what was taken. Safe to call more than once. */
  refuse(): void;
  /** The backend is done: charge, release the rest and the slot, queue the record. Once. */
  release(usage: Settlement): Released;
}

export interface Released {
  /**
   * The balance left after the charge where this process knows it without a round trip
   * (see each implementation), for the answer's X-Lmgate-Balance.
   */
  balanceMicros: number | undefined;
  /** The charge is durable (committed to the store; in shared mode, in Redis): the answer's last byte waits for it. */
  durable: Promise<void> | undefined;
}

export class MemoryAdmission implements Admission {
  readonly requestsAtAdmission = false;

  constructor(
    private readonly limitsOf: AccountLimits,
    readonly credits: MemoryCreditBook,
    private readonly writer: UsageWriter,
    private readonly keySpend: MemoryKeySpend,
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
    return new MemoryPass(this.limitsOf, this.credits, this.writer, this.keySpend, principal);
  }

  snapshot(accountId: string): Promise<BalanceSnapshot> {
    return this.credits.snapshot(accountId);
  }

  keySpent(key: LimitedKey): MaybePromise<number> {
    return this.keySpend.spent(key);
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

  get pendingUsage(): number {
    return this.writer.pending;
  }

  observeUsageWrites(observer: UsageWriteObserver): void {
    this.writer.observer = observer;
  }
}

class MemoryPass implements Pass {
  private readonly releaseSlot: () => void;
  private readonly accountId: string;
  private readonly tier: Tier;
  private readonly key: LimitedKey | undefined;
  private tokensTaken = 0;
  private reservation: Reservation | undefined;
  private keyHold: KeyHold | undefined;

  constructor(
    private readonly limits: AccountLimits,
    private readonly credits: MemoryCreditBook,
    private readonly writer: UsageWriter,
    private readonly keySpend: MemoryKeySpend,
    { accountId, tier, key }: Principal,
  ) {
    this.accountId = accountId;
    this.tier = tier;
    this.key = key;
    // First, before the body is even validated: the slot bounds the work one account can
    // have running, counting long prompts included.
    this.releaseSlot = limits.acquireSlot(accountId, tier);
  }

  get reservedMicros(): number {
    return this.reservation?.amountMicros ?? 0;
  }

  requireCredit(): MaybePromise<void> {
    const { key } = this;
    const account = this.credits.requireCredit(this.accountId);
    return key === undefined ? account : andThen(account, () => this.keySpend.requireCredit(key));
  }

  admit({ promptTokens, worstCaseMicros }: RequestPlan): MaybePromise<Decision> {
    this.limits.takeTokens(this.accountId, this.tier, promptTokens);
    this.tokensTaken = promptTokens;
    const { key } = this;
    return andThen(this.credits.reserve(this.accountId, worstCaseMicros), (reservation) => {
      if (key === undefined) return this.admitted(reservation);
      return andThen(this.holdForKey(key, worstCaseMicros, reservation), (hold) => {
        this.keyHold = hold;
        return this.admitted(reservation);
      });
    });
  }

  /**
   * The key's hold on its credit limit, after the account's reservation (so the account's 402
   * comes first, as in shared mode), or 402 key_credit_limit having given that reservation
   * back uncharged.
   */
  private holdForKey(key: LimitedKey, amountMicros: number, reservation: Reservation): MaybePromise<KeyHold> {
    const unreserve = (err: unknown): never => {
      this.credits.settle(reservation, 0);
      throw err;
    };
    try {
      const hold = this.keySpend.hold(key, amountMicros);
      return hold instanceof Promise ? hold.catch(unreserve) : hold;
    } catch (err) {
      return unreserve(err);
    }
  }

  private admitted(reservation: Reservation): Decision {
    this.reservation = reservation;
    return { reservation };
  }

  refuse(): void {
    this.limits.refundTokens(this.accountId, this.tier, this.tokensTaken);
    this.tokensTaken = 0;
    this.releaseSlot();
  }

  /** The balance after the charge: exact, as this process holds every charge of the account. */
  release({ completionTokens, record }: Settlement): Released {
    let balanceMicros: number | undefined;
    if (this.reservation) {
      const settled = this.credits.settle(this.reservation, record.costMicros);
      record.shortfallMicros = record.costMicros - settled.chargedMicros;
      balanceMicros = settled.balanceMicros;
    }
    if (this.keyHold) this.keySpend.settle(this.keyHold, record);
    this.limits.chargeTokens(this.accountId, this.tier, completionTokens);
    this.releaseSlot();
    return { balanceMicros, durable: this.writer.enqueue(record) };
  }
}
