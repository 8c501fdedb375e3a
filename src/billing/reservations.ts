// Live balances and reservations, in process (one instance). Step 6 of the request path
// reserves the worst case here before a backend is called, step 8 settles the exact cost.
// Nothing here waits on the store once an account's balance is loaded.
//
// Per account:  available = stored − unflushed − reserved
//   stored     the balance as last read from the store
//   unflushed  settled charges queued for the store but not yet written (usage-writer.ts)
//   reserved   worst cases of requests still running
// Reads of `stored` and the writer's flushes run one at a time (`exclusive`), so a read
// can never overtake a flush and count a charge twice or not at all.
import { andThen, type MaybePromise } from '../maybe-promise.js';
import { assertFits } from './credit-rule.js';
import type { CreditSource } from '../store/queries.js';
import type { UsageRecord } from '../store/store.js';

/**
 * Credit held for one request until it is released. In shared mode it is held under a
 * lease its instance renews, so a crashed instance's reservations lapse; in memory the
 * process is the lease.
 */
export interface Reservation {
  readonly id: string;
  readonly accountId: string;
  readonly amountMicros: number;
}

interface HeldReservation extends Reservation {
  settled: boolean;
}

/** What a settlement charged (less than the cost only when the account could not pay) and the balance it left. */
export interface SettledCharge {
  chargedMicros: number;
  balanceMicros: number;
}

export interface BalanceSnapshot {
  /** Balance after every settled charge, written or not. */
  balanceMicros: number;
  reservedMicros: number;
}

export interface CreditBook {
  /**
   * Throws InsufficientCreditsError when nothing is available, before a request does any
   * costly work (counting a long prompt). Synchronous once the account is loaded.
   */
  requireCredit(accountId: string): MaybePromise<void>;
  /** Reads the account's balance the first time; nothing once it is loaded. */
  load(accountId: string): MaybePromise<void>;
  /** Reserves `amountMicros` of a loaded account, or throws InsufficientCreditsError. */
  reserve(accountId: string, amountMicros: number): Reservation;
  /**
   * Releases the reservation and charges `costMicros`: the reservation, and beyond it what
   * the account has available, never taking the balance below 0 nor another request's
   * reservation. Idempotent. Returns what was charged and the balance left.
   */
  settle(reservation: Reservation, costMicros: number): SettledCharge;
  /** Reservations not yet settled, for tests and invariants. */
  readonly openReservations: number;
  snapshot(accountId: string): Promise<BalanceSnapshot>;
}

interface AccountCredit {
  storedMicros: number;
  unflushedMicros: number;
  reservedMicros: number;
}

export class MemoryCreditBook implements CreditBook {
  private readonly accounts = new Map<string, AccountCredit>();
  private readonly loading = new Map<string, Promise<AccountCredit>>();
  private queue: Promise<unknown> = Promise.resolve();
  private reservationsMade = 0;
  openReservations = 0;

  constructor(private readonly store: Pick<CreditSource, 'balanceOf'>) {}

  requireCredit(accountId: string): MaybePromise<void> {
    return andThen(this.loaded(accountId), (credit) => assertAvailable(credit, undefined));
  }

  load(accountId: string): MaybePromise<void> {
    return this.accounts.has(accountId) ? undefined : this.read(accountId).then(() => undefined);
  }

  reserve(accountId: string, amountMicros: number): Reservation {
    const credit = this.accounts.get(accountId);
    if (credit === undefined) throw new Error(`account ${accountId} reserved before its balance was loaded`);
    assertAvailable(credit, amountMicros);
    credit.reservedMicros += amountMicros;
    this.openReservations++;
    const held: HeldReservation = { id: `rsv_${++this.reservationsMade}`, accountId, amountMicros, settled: false };
    return held;
  }

  settle(reservation: Reservation, costMicros: number): SettledCharge {
    const held = reservation as HeldReservation;
    const credit = this.accounts.get(reservation.accountId)!;
    let chargedMicros = 0;
    if (!held.settled) {
      held.settled = true;
      this.openReservations--;
      credit.reservedMicros -= reservation.amountMicros;
      // The hold is released first: it and everything else available pay for the cost.
      const availableMicros = credit.storedMicros - credit.unflushedMicros - credit.reservedMicros;
      chargedMicros = Math.min(Math.max(0, costMicros), Math.max(0, availableMicros));
      credit.unflushedMicros += chargedMicros;
    }
    return { chargedMicros, balanceMicros: credit.storedMicros - credit.unflushedMicros };
  }

  async snapshot(accountId: string): Promise<BalanceSnapshot> {
    const credit = this.accounts.get(accountId) ?? (await this.read(accountId));
    return { balanceMicros: credit.storedMicros - credit.unflushedMicros, reservedMicros: credit.reservedMicros };
  }

  /** Re-reads the stored balance (after a grant or adjustment made elsewhere). */
  reload(accountId: string): Promise<void> {
    if (!this.accounts.has(accountId)) return Promise.resolve();
    return this.exclusive(async () => {
      const stored = await this.store.balanceOf(accountId);
      this.accounts.get(accountId)!.storedMicros = stored;
    });
  }

  /**
   * Writes settled records with `write` and moves their charges from unflushed into the
   * stored balance read back after the commit, between other reads of the store (see the
   * header comment). A failed write changes nothing here.
   */
  commitSettled(records: readonly UsageRecord[], write: () => Promise<void>): Promise<void> {
    return this.exclusive(async () => {
      await write();
      const chargedByAccount = new Map<string, number>();
      for (const record of records) {
        // What settle() moved into unflushed: the cost less what the account could not pay.
        chargedByAccount.set(record.accountId, (chargedByAccount.get(record.accountId) ?? 0) + record.costMicros - record.shortfallMicros);
      }
      const stored = await Promise.all([...chargedByAccount.keys()].map((id) => this.store.balanceOf(id)));
      [...chargedByAccount].forEach(([accountId, chargedMicros], i) => {
        const credit = this.accounts.get(accountId);
        if (!credit) return;
        credit.unflushedMicros -= chargedMicros;
        credit.storedMicros = stored[i]!;
      });
    });
  }

  /** Runs store reads and flushes one at a time (see the header comment). */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private loaded(accountId: string): MaybePromise<AccountCredit> {
    return this.accounts.get(accountId) ?? this.read(accountId);
  }

  private read(accountId: string): Promise<AccountCredit> {
    let pending = this.loading.get(accountId);
    if (!pending) {
      pending = this.exclusive(async () => {
        const existing = this.accounts.get(accountId);
        if (existing) return existing;
        const credit: AccountCredit = { storedMicros: await this.store.balanceOf(accountId), unflushedMicros: 0, reservedMicros: 0 };
        this.accounts.set(accountId, credit);
        return credit;
      }).finally(() => this.loading.delete(accountId));
      this.loading.set(accountId, pending);
    }
    return pending;
  }
}

/** `amountMicros` undefined: anything available will do (the check before counting). */
function assertAvailable(credit: AccountCredit, amountMicros: number | undefined): void {
  assertFits(credit.storedMicros - credit.unflushedMicros - credit.reservedMicros, amountMicros);
}
