// The admission port: what a request is admitted for, what it plans to use, what it used,
// and the two views of the admission (the routes', the process's).
import type { RateLimitState } from '../errors.js';
import type { LimitsSnapshot, TakenRequests } from '../limits/account-limits.js';
import type { MaybePromise } from '../maybe-promise.js';
import type { UsageRecord } from '../store/store.js';
import type { SpendLimit } from './spend-limit.js';
import type { BalanceSnapshot, Reservation } from './reservations.js';
import type { Tier } from './tiers.js';
import type { UsageWriteObserver } from './usage-writer.js';

/** Whom a request is admitted for. */
export interface Principal {
  accountId: string;
  tier: Tier;
  /** The limits on spending its charges count against, in order (spend-limit.ts spendLimitsOf); none: nothing is looked up. */
  spendLimits?: readonly SpendLimit[];
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
 * The admission port, as the API's routes see it: where limits and credits are decided, in
 * this process (memory-admission.ts) or in Redis (shared/shared-admission.ts). A chat
 * request opens a Pass before its body is looked at, is admitted in one decision against
 * its counters (counters.ts) once its prompt is counted, and is released with its usage
 * after the model. MaybePromise: the memory implementation answers without a promise while
 * the account is loaded, which on the request path is measurably cheaper.
 */
export interface Admission {
  /**
   * One request of the tier's requests per minute, or 429; undefined, taking nothing, for a
   * route whose admission takes it in the same round trip (`admitsRequest`, shared mode).
   */
  takeRequest(principal: Principal, admitsRequest: boolean): MaybePromise<RateLimitState | undefined>;
  /** One request of a key's own requests per minute (its controls), or 429 with reason key_rate_limit. */
  takeKeyRequest(keyId: string, rpm: number): MaybePromise<RateLimitState>;
  /** Gives back what takeRequest and takeKeyRequest took for a request then refused: a refusal costs no limit. */
  giveBackRequests(taken: TakenRequests): MaybePromise<void>;
  /** A chat request starts (in memory: its concurrency slot, or 429). */
  open(principal: Principal): Pass;
  /** What a limit's scope spent in its current window (the dashboard shows it against the limit). */
  spent(limit: SpendLimit): MaybePromise<number>;
  limits(principal: Principal): MaybePromise<LimitsSnapshot>;
}

/** The admission as the process that runs it sees it: its life, its health, the balances it holds. */
export interface AdmissionService extends Admission {
  /** An account's live balance; read through billing/balances.ts, the one way to read a balance. */
  snapshot(accountId: string): Promise<BalanceSnapshot>;
  /** The stored balance changed (a grant, a redemption, another instance): read it again. */
  balanceChanged(accountId: string): Promise<void>;
  start(): Promise<void>;
  /** Writes settled usage to the store now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
  /** For /metrics. */
  health(): AdmissionHealth;
  /** Who is told of usage batches written and of charges cut at the balance. */
  observeUsageWrites(observer: UsageWriteObserver): void;
  /** Whether the shared state answers (shared mode only), for /readyz. */
  ping?(): Promise<unknown>;
}

export interface AdmissionHealth {
  /** Settled records waiting in this process for the store. */
  pendingUsage: number;
  /** Shared mode: whether Redis answers, and the settlements waiting for it. */
  shared?: { redisUp: boolean; unsettled: number };
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
