// Shared mode's live state (scripts.ts): admissions, settlements, requests per minute,
// balances and keys' credit limits, in Redis, so that any number of instances act as one.
// One round trip admits a chat request; one settles it. The store is read only to create or
// refresh an account's balance mirror, and to start the count of a key's spending.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { creditWindowOf, type SpendLimit } from '../billing/spend-limit.js';
import type { BalanceSnapshot } from '../billing/reservations.js';
import type { Tier } from '../billing/tiers.js';
import { RateLimitedError, SharedStateUnavailableError, type RateLimitState } from '../errors.js';
import { balanceRow, budgetRow, rateRow, rowsArguments, slotsRow, type CounterRow } from './counter-rows.js';
import { ADMIT, RELEASE, SETTLE } from './counter-scripts.js';
import { RecentSettlements, watchGeneration } from './empty-restart.js';
import type { LimitsSnapshot, TakenRequests } from '../limits/account-limits.js';
import type { RateLimitDecision } from '../limits/limiter.js';
import { isoNow } from '../clock.js';
import type { CreditSource } from '../store/queries.js';
import type { UsageRecord } from '../store/store.js';
import { BatchedScript, LuaScript } from './lua-script.js';
import { SharedSpend } from './shared-spend.js';
import { GIVE_BACK_REQUEST, LIMITS, SNAPSHOT, TAKE_REQUEST } from './scripts.js';
import { MIRROR, RENEW } from './upkeep-scripts.js';

const takeRequestScript = new LuaScript(TAKE_REQUEST);
const mirrorScript = new LuaScript(MIRROR);
const renewScript = new LuaScript(RENEW);
const limitsScript = new LuaScript(LIMITS);
const snapshotScript = new LuaScript(SNAPSHOT);
const releaseScript = new LuaScript(RELEASE);
const giveBackScript = new LuaScript(GIVE_BACK_REQUEST);

/** A reservation (and concurrency slot) held in Redis until settled or its lease runs out. */
export interface SharedReservation {
  readonly accountId: string;
  readonly leaseId: string;
  readonly amountMicros: number;
  /** Requests per minute after this one, for the X-RateLimit-* headers. */
  readonly requests: RateLimitState;
  /** The account's balance at admission, before this request's charge. */
  readonly balanceMicros: number;
  /** The limits on spending that also hold it. */
  readonly spendLimits: readonly SpendLimit[];
  settled: boolean;
}

export interface AdmitInput {
  accountId: string;
  tier: Tier;
  promptTokens: number;
  worstCaseMicros: number;
  /** False when requests per minute was already taken for this request. */
  takeRequest: boolean;
  /** The limits on spending its charge counts against. */
  spendLimits?: readonly SpendLimit[];
}

/** A settlement that could not reach Redis, kept to be retried when Redis is back. */
interface Unsettled {
  reservation: SharedReservation;
  tpm: number;
  completionTokens: number;
  record: UsageRecord;
}

/** Settlements kept through an outage; beyond this they are dropped (and reported). */
const MAX_UNSETTLED = 10_000;
const SETTLE_RETRY_MS = 1_000;
/** Settlements kept to replay into a Redis that came back empty: far longer than the store takes to have them. */
const KEEP_SETTLED_MS = 5_000;

export interface SharedStateOptions {
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix: string;
  /** How long a reservation or slot outlives its instance's last renewal. */
  leaseMs: number;
  onError: (err: unknown) => void;
}

export class SharedState {
  /** Leases this instance holds, renewed until settled: lease id → account id. */
  private readonly live = new Map<string, string>();
  /** The same leases held on limits on spending: lease id → the limits' ids. */
  private readonly liveOnLimits = new Map<string, string[]>();
  private renewTimer: NodeJS.Timeout | undefined;
  /** Settlements that met an unreachable Redis, oldest first. */
  private unsettled: Unsettled[] = [];
  /** The keys (and lease) of admissions whose reply timed out: released once Redis answers. */
  private abandoned: { keys: string[]; leaseId: string }[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  /** The try of kept settlements running now, if any. */
  private retrying: Promise<void> | undefined;
  /** Settled lately: their stream entries may be lost before they are stored, should Redis come back empty. */
  private readonly recent = new RecentSettlements<Unsettled>(KEEP_SETTLED_MS, MAX_UNSETTLED);
  /** Admissions and settlements, each batched per turn of the event loop. */
  private readonly admitScript: BatchedScript;
  private readonly settleScript: BatchedScript;
  /** Limits on spending: their counts in Redis, and what each scope spent. */
  readonly spend: SharedSpend;

  constructor(
    readonly redis: Redis,
    private readonly store: CreditSource,
    readonly options: SharedStateOptions,
  ) {
    this.admitScript = new BatchedScript(ADMIT, redis);
    this.settleScript = new BatchedScript(SETTLE, redis);
    this.spend = new SharedSpend(redis, store, options.prefix, this.usageStream);
  }

  keys(accountId: string): AccountKeys {
    const base = `${this.options.prefix}:${accountId}`;
    return {
      credit: `${base}:credit`,
      leases: `${base}:leases`,
      amounts: `${base}:amounts`,
      slots: `${base}:slots`,
      rpm: `${base}:rpm`,
      tpm: `${base}:tpm`,
      writes: `${base}:writes`,
      landed: `${base}:landed`,
    };
  }

  get usageStream(): string {
    return `${this.options.prefix}:usage`;
  }

  start(): void {
    watchGeneration(this.redis, `${this.options.prefix}:generation`, () => this.replayRecent(), this.options.onError);
    const every = Math.max(100, Math.floor(this.options.leaseMs / 3));
    this.renewTimer = setInterval(() => void this.renewLeases().catch(this.options.onError), every);
    this.renewTimer.unref();
  }

  stop(): void {
    clearInterval(this.renewTimer);
    clearTimeout(this.retryTimer);
  }

  /** Settlements still waiting for Redis (none, unless it was unreachable). */
  get unsettledCount(): number {
    return this.unsettled.length;
  }

  /** One request of the tier's requests per minute, or 429. */
  takeRequest(accountId: string, tier: Tier): Promise<RateLimitState> {
    return this.takeFrom(this.keys(accountId).rpm, tier.config.rpm);
  }

  /** One request of a key's own requests per minute, or 429 naming the key's limit. */
  takeKeyRequest(keyId: string, rpm: number): Promise<RateLimitState> {
    return this.takeFrom(`${this.options.prefix}:key:${keyId}:rpm`, rpm, 'key_rate_limit');
  }

  /** Requests per minute taken by a request that was then refused, given back (the account's and its key's). */
  async giveBackRequests(taken: TakenRequests): Promise<void> {
    const keys: string[] = [];
    const limits: number[] = [];
    if (taken.account) keys.push(this.keys(taken.account.accountId).rpm), limits.push(taken.account.tier.config.rpm);
    if (taken.key) keys.push(`${this.options.prefix}:key:${taken.key.id}:rpm`), limits.push(taken.key.rpm);
    if (keys.length > 0) await giveBackScript.run(this.redis, keys, limits);
  }

  private async takeFrom(rpmKey: string, rpm: number, reason?: 'key_rate_limit'): Promise<RateLimitState> {
    const [allowed, limit, remaining, resetAtUnixSec, retryAfterSec] = (await takeRequestScript.run(this.redis, [rpmKey], [rpm])) as number[];
    const state = { limit: limit!, remaining: remaining!, resetAtUnixSec: resetAtUnixSec! };
    if (allowed !== 1) throw new RateLimitedError(state, retryAfterSec!, reason);
    return state;
  }

  /**
   * The request's counters in one script, in order: its slot, requests per minute (unless
   * taken already), the prompt against tokens per minute, the worst case against the
   * account's balance and against each of its limits on spending. Throws 429
   * or 402 having taken nothing.
   */
  async admit(input: AdmitInput): Promise<SharedReservation> {
    const leaseId = randomUUID();
    const keys = this.keys(input.accountId);
    const { config } = input.tier;
    const { spendLimits = [] } = input;
    const rows: CounterRow[] = [
      slotsRow(keys.slots, config.concurrency),
      rateRow(keys.rpm, config.rpm, input.takeRequest ? 1 : 0),
      rateRow(keys.tpm, config.tpm, input.promptTokens),
      balanceRow(keys, () => this.refreshBalance(input.accountId)),
    ];
    for (const limit of spendLimits) {
      const window = creditWindowOf(limit.limit.period, isoNow());
      rows.push(budgetRow(this.spend.keys(limit.id), limit, window, () => this.spend.count(limit, window)));
    }
    const { keys: rowKeys, args: rowArgs } = rowsArguments(rows);
    const run = async (): Promise<(string | number)[]> => (await this.admitScript.run(rowKeys, [leaseId, this.options.leaseMs, input.worstCaseMicros, ...rowArgs])) as (string | number)[];
    let reply: (string | number)[];
    try {
      reply = await run();
      // Each row's state is read from the store at most once.
      const loaded = new Set<number>();
      while (reply[0] === 'load' && !loaded.has(reply[1] as number)) {
        loaded.add(reply[1] as number);
        await rows[reply[1] as number]!.load!();
        reply = await run();
      }
    } catch (err) {
      // Refused with 503; but a stalled Redis may still run it when it resumes, and hold
      // the account's credits for the lease: what it took is given back as soon as it can be.
      if (err instanceof SharedStateUnavailableError) {
        const holds = rows.filter((row) => row.kind === 'balance' || row.kind === 'budget').flatMap((row) => row.keys);
        this.abandoned.push({ keys: [keys.slots, ...holds], leaseId });
        this.retrySoon();
      }
      throw err;
    }
    if (reply[0] === 'ok') {
      this.live.set(leaseId, input.accountId);
      if (spendLimits.length > 0) this.liveOnLimits.set(leaseId, spendLimits.map((limit) => limit.id));
      // Two values per row: the rpm row's (index 1) remaining and reset, the balance row's (index 3) balance.
      const [rpmRemaining, rpmReset, balanceMicros] = [reply[3], reply[4], reply[7]] as number[];
      return {
        accountId: input.accountId,
        leaseId,
        amountMicros: input.worstCaseMicros,
        requests: { limit: config.rpm, remaining: rpmRemaining!, resetAtUnixSec: rpmReset! },
        balanceMicros: balanceMicros!,
        spendLimits,
        settled: false,
      };
    }
    const row = rows[reply[1] as number];
    if (reply[0] === 'refused') throw row!.refusal(reply.slice(2) as number[], input.worstCaseMicros);
    // Still to be read after reading it: instances that disagree for a moment on a key's
    // limit period (one has not heard of the change yet) each start the count of their own.
    if (reply[0] === 'load') throw new SharedStateUnavailableError({ cause: new Error(`no ${row!.kind} state of ${row!.keys[0]} after reading it`) });
    throw new Error(`unexpected admission reply ${JSON.stringify(reply)}`);
  }

  /**
   * Releases the reservation and slot, charges `record.costMicros` (from the hold, and beyond
   * it from what the account has available; SETTLE cuts it only at 0, and the stream entry
   * says what was charged) and hands the record to the usage stream. Idempotent per admission. When
   * Redis cannot be reached, the settlement is kept and retried every second, its lease
   * renewed meanwhile, so an outage costs neither the charge nor the hold on the credits.
   * A retry of one that did run (its reply lost) finds its marker and changes nothing.
   */
  async settle(reservation: SharedReservation, tier: Tier, completionTokens: number, record: UsageRecord): Promise<void> {
    if (reservation.settled) return;
    reservation.settled = true;
    await this.runSettle({ reservation, tpm: tier.config.tpm, completionTokens, record });
  }

  /**
   * Gives back what abandoned admissions may have taken, then tries again the settlements
   * that met an outage; those that fail again wait for the next try.
   */
  retryUnsettled(): Promise<void> {
    // One try at a time: a caller during one waits for it (and then tries what is left).
    const next = (this.retrying ?? Promise.resolve()).then(() => this.retryKept());
    const current = next.finally(() => {
      if (this.retrying === current) this.retrying = undefined;
    });
    this.retrying = current;
    return current;
  }

  private async retryKept(): Promise<void> {
    const abandoned = this.abandoned;
    this.abandoned = [];
    for (const [at, each] of abandoned.entries()) {
      try {
        await releaseScript.run(this.redis, each.keys, [each.leaseId]);
      } catch {
        this.abandoned.push(...abandoned.slice(at));
        this.retrySoon();
        break;
      }
    }
    const waiting = this.unsettled;
    this.unsettled = [];
    for (const each of waiting) await this.runSettle(each).catch(() => undefined);
  }

  /** Redis came back empty: what was settled lately is settled again (the store keeps each record once). */
  private replayRecent(): void {
    this.unsettled.push(...this.recent.takeAll());
    void this.retryUnsettled();
  }

  private retrySoon(): void {
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      void this.retryUnsettled();
    }, SETTLE_RETRY_MS).unref();
  }

  private async runSettle(settlement: Unsettled): Promise<void> {
    const { reservation, tpm, completionTokens, record } = settlement;
    const keys = this.keys(reservation.accountId);
    const rows: CounterRow[] = [slotsRow(keys.slots, 0), rateRow(keys.tpm, tpm, completionTokens), balanceRow(keys, noLoad)];
    // The charge counts in the window its usage record is dated in, as the store will count it.
    for (const limit of reservation.spendLimits) rows.push(budgetRow(this.spend.keys(limit.id), limit, creditWindowOf(limit.limit.period, record.createdAt), noLoad));
    const { keys: rowKeys, args: rowArgs } = rowsArguments(rows);
    // The settlement's marker (last of the keys): a retry whose first try did run does nothing.
    const marker = `${this.options.prefix}:settled:${reservation.leaseId}`;
    try {
      await this.settleScript.run([...rowKeys, this.usageStream, marker], [reservation.leaseId, record.costMicros, reservation.accountId, JSON.stringify(record), ...rowArgs]);
      this.forget(reservation.leaseId);
      this.recent.add(settlement);
    } catch (err) {
      if (err instanceof SharedStateUnavailableError && this.unsettled.length < MAX_UNSETTLED) {
        this.unsettled.push(settlement);
        this.retrySoon();
      } else {
        this.forget(reservation.leaseId);
      }
      throw err;
    }
  }

  /** Reads the account's balance from the store into the mirror, unless the mirror is newer. */
  async refreshBalance(accountId: string): Promise<void> {
    const { balanceMicros, version } = await this.store.versionedBalanceOf(accountId);
    const { credit, writes, landed } = this.keys(accountId);
    await mirrorScript.run(this.redis, [credit, writes, landed], [version, balanceMicros]);
  }

  async snapshot(accountId: string): Promise<BalanceSnapshot> {
    const { credit, leases, amounts, slots } = this.keys(accountId);
    const read = async (): Promise<(string | null)[] | null> => (await snapshotScript.run(this.redis, [credit, leases, amounts, slots], [])) as (string | null)[] | null;
    let mirror = await read();
    if (mirror === null) {
      await this.refreshBalance(accountId);
      mirror = await read();
    }
    const [stored, pending, reserved] = mirror ?? [];
    return { balanceMicros: Number(stored) - Number(pending ?? 0), reservedMicros: Number(reserved ?? 0) };
  }

  /** The account's limits across instances, taking nothing. */
  async limits(accountId: string, tier: Tier): Promise<LimitsSnapshot> {
    const keys = this.keys(accountId);
    const { rpm, tpm, concurrency } = tier.config;
    const [rpmLeft, rpmReset, tpmLeft, tpmReset, inUse] = (await limitsScript.run(this.redis, [keys.rpm, keys.tpm, keys.slots], [rpm, tpm])) as number[];
    const state = (limit: number, remaining: number, resetAtUnixSec: number): RateLimitDecision => ({ allowed: true, limit, remaining, resetAtUnixSec, retryAfterSec: 0 });
    return {
      requests: state(rpm, rpmLeft!, rpmReset!),
      tokens: state(tpm, tpmLeft!, tpmReset!),
      concurrency: { limit: concurrency, inUse: inUse! },
    };
  }

  private forget(leaseId: string): void {
    this.live.delete(leaseId);
    this.liveOnLimits.delete(leaseId);
  }

  private async renewLeases(): Promise<void> {
    const renew = (ids: Map<string, string[]>, setsOf: (owner: string) => string[]) =>
      [...ids].map(([owner, leaseIds]) => renewScript.run(this.redis, setsOf(owner), [this.options.leaseMs, ...leaseIds]));
    await Promise.all([
      ...renew(groupByValue(this.live), (accountId) => {
        const keys = this.keys(accountId);
        return [keys.leases, keys.slots];
      }),
      ...renew(groupByValue(this.liveOnLimits), (limitId) => [this.spend.keys(limitId).leases]),
    ]);
  }
}

/** Settlement never reads from the store: a row without a mirror is left to the store. */
const noLoad = (): Promise<void> => Promise.resolve();

/** lease id → owner, as owner → lease ids. */
function groupByValue(leases: ReadonlyMap<string, string | readonly string[]>): Map<string, string[]> {
  const byOwner = new Map<string, string[]>();
  for (const [leaseId, owners] of leases) {
    for (const owner of typeof owners === 'string' ? [owners] : owners) {
      const ids = byOwner.get(owner);
      if (ids) ids.push(leaseId);
      else byOwner.set(owner, [leaseId]);
    }
  }
  return byOwner;
}

export interface AccountKeys {
  credit: string;
  leases: string;
  amounts: string;
  slots: string;
  rpm: string;
  tpm: string;
  writes: string;
  landed: string;
}
