// Keys' credit limits in process (one instance): per key with a limit, what it spent in its
// window and what its running requests hold (key-credit.ts has the rule). A key's spending
// is read from the store the first time a request with its limit needs it (with the
// charges settled here that the usage writer has not written yet), and from then on every
// charge of a request held against the limit is added as it settles, so a check is a
// comparison. Keys without a limit are never looked up.
import { isoNow } from '../clock.js';
import type { CreditSource } from '../store/queries.js';
import type { CreditPeriod, UsageRecord } from '../store/store.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import { assertFits } from './credit-rule.js';
import { creditWindowOf, creditWindowStart, isLaterWindow, type LimitedKey } from './key-credit.js';
import type { UsageWriter } from './usage-writer.js';

interface KeySpend {
  readonly period: CreditPeriod;
  window: string;
  spentMicros: number;
  heldMicros: number;
}

/** What one request holds against its key's limit, from admission to settlement. */
export interface KeyHold {
  readonly spend: KeySpend;
  readonly amountMicros: number;
}

export class MemoryKeySpend {
  private readonly spends = new Map<string, KeySpend>();
  private readonly loading = new Map<string, Promise<KeySpend>>();

  constructor(
    private readonly store: Pick<CreditSource, 'keySpend'>,
    private readonly writer: UsageWriter,
  ) {}

  /** 402 key_credit_limit when nothing is left of the limit (before a prompt is counted). */
  requireCredit(key: LimitedKey): MaybePromise<void> {
    return andThen(this.load(key), (spend) => assertKeyCredit(key, spend, undefined));
  }

  /** Holds `amountMicros` against the limit of a key loaded (`load`), or 402 key_credit_limit. */
  hold(key: LimitedKey, amountMicros: number): KeyHold {
    const spend = this.spends.get(key.id);
    if (spend === undefined || spend.period !== key.limit.period) throw new Error(`key ${key.id} held before its spend was loaded`);
    assertKeyCredit(key, spend, amountMicros);
    spend.heldMicros += amountMicros;
    return { spend, amountMicros };
  }

  /** Gives the hold back: the request was refused after it was taken. */
  cancel({ spend, amountMicros }: KeyHold): void {
    spend.heldMicros -= amountMicros;
  }

  /** The request is done: its hold released, its charge (`record.costMicros`) added to the window it is dated in. */
  settle(hold: KeyHold, record: UsageRecord): void {
    const { spend } = hold;
    spend.heldMicros -= hold.amountMicros;
    const window = creditWindowOf(spend.period, record.createdAt);
    roll(spend, window);
    if (window === spend.window) spend.spentMicros += record.costMicros - record.shortfallMicros;
  }

  /** What the key spent in its limit's current window, for the dashboard. */
  spent(key: LimitedKey): MaybePromise<number> {
    return andThen(this.load(key), (spend) => {
      roll(spend, creditWindowOf(spend.period, isoNow()));
      return spend.spentMicros;
    });
  }

  /** Reads the key's spending the first time (and after its limit's period changed). */
  load(key: LimitedKey): MaybePromise<KeySpend> {
    const spend = this.spends.get(key.id);
    // A limit whose period changed counts another window: read afresh.
    if (spend !== undefined && spend.period === key.limit.period) return spend;
    return this.read(key.id, key.limit.period);
  }

  private read(keyId: string, period: CreditPeriod): Promise<KeySpend> {
    const id = `${keyId}:${period}`;
    let pending = this.loading.get(id);
    if (pending === undefined) {
      const window = creditWindowOf(period, isoNow());
      // Settled here but perhaps not yet in the store: the store counts each once.
      const unstored = [...this.writer.unwritten()].filter((record) => record.keyId === keyId && creditWindowOf(period, record.createdAt) === window);
      pending = this.store
        .keySpend(keyId, creditWindowStart(window), unstored)
        .then((spentMicros) => {
          const spend: KeySpend = { period, window, spentMicros, heldMicros: 0 };
          this.spends.set(keyId, spend);
          return spend;
        })
        .finally(() => this.loading.delete(id));
      this.loading.set(id, pending);
    }
    return pending;
  }
}

function assertKeyCredit(key: LimitedKey, spend: KeySpend, amountMicros: number | undefined): void {
  roll(spend, creditWindowOf(spend.period, isoNow()));
  assertFits(key.limit.amountMicros - spend.spentMicros - spend.heldMicros, amountMicros, 'key_credit_limit');
}

/** A new month began: nothing is spent in it yet, except what settles from now on. */
function roll(spend: KeySpend, window: string): void {
  if (isLaterWindow(window, spend.window)) {
    spend.window = window;
    spend.spentMicros = 0;
  }
}
