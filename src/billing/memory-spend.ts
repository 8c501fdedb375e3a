// Spend limits in process (one instance): per limit (a key's credit limit, a member's or
// an organisation's monthly budget; spend-limit.ts has the rule), what its scope spent in
// its window and what its running requests hold. A scope's spending is read from the store
// the first time a request under the limit needs it (with the charges settled here that the
// usage writer has not written yet), and from then on every charge of a request held
// against the limit is added as it settles, so a check is a comparison. Requests under no
// limit are never looked up.
import { isoNow } from '../clock.js';
import type { CreditSource } from '../store/queries.js';
import type { CreditPeriod, UsageRecord } from '../store/store.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import { assertFits } from './credit-rule.js';
import { countsToward, creditWindowOf, creditWindowStart, isLaterWindow, type SpendLimit } from './spend-limit.js';
import type { UsageWriter } from './usage-writer.js';

interface Spend {
  readonly period: CreditPeriod;
  window: string;
  spentMicros: number;
  heldMicros: number;
}

/** What one request holds against a limit, from admission to settlement. */
export interface SpendHold {
  readonly spend: Spend;
  readonly amountMicros: number;
}

export class MemorySpend {
  private readonly spends = new Map<string, Spend>();
  private readonly loading = new Map<string, Promise<Spend>>();

  constructor(
    private readonly store: Pick<CreditSource, 'spendOf'>,
    private readonly writer: UsageWriter,
  ) {}

  /** 402 naming the limit when nothing is left of it (before a prompt is counted). */
  requireCredit(limit: SpendLimit): MaybePromise<void> {
    return andThen(this.load(limit), (spend) => assertWithin(limit, spend, undefined));
  }

  /** Holds `amountMicros` against a limit loaded (`load`), or 402 naming it. */
  hold(limit: SpendLimit, amountMicros: number): SpendHold {
    const spend = this.spends.get(limit.id);
    if (spend === undefined || spend.period !== limit.limit.period) throw new Error(`${limit.id} held before its spend was loaded`);
    assertWithin(limit, spend, amountMicros);
    spend.heldMicros += amountMicros;
    return { spend, amountMicros };
  }

  /** Gives the hold back: the request was refused after it was taken. */
  cancel({ spend, amountMicros }: SpendHold): void {
    spend.heldMicros -= amountMicros;
  }

  /** The request is done: its hold released, its charge (`record.costMicros`) added to the window it is dated in. */
  settle(hold: SpendHold, record: UsageRecord): void {
    const { spend } = hold;
    spend.heldMicros -= hold.amountMicros;
    const window = creditWindowOf(spend.period, record.createdAt);
    roll(spend, window);
    if (window === spend.window) spend.spentMicros += record.costMicros - record.shortfallMicros;
  }

  /** What the limit's scope spent in its current window, for the dashboard. */
  spent(limit: SpendLimit): MaybePromise<number> {
    return andThen(this.load(limit), (spend) => {
      roll(spend, creditWindowOf(spend.period, isoNow()));
      return spend.spentMicros;
    });
  }

  /** Reads the scope's spending the first time (and after its limit's period changed). */
  load(limit: SpendLimit): MaybePromise<Spend> {
    const spend = this.spends.get(limit.id);
    // A limit whose period changed counts another window: read afresh.
    if (spend !== undefined && spend.period === limit.limit.period) return spend;
    return this.read(limit);
  }

  private read({ id, scope, limit: { period } }: SpendLimit): Promise<Spend> {
    const loadId = `${id}:${period}`;
    let pending = this.loading.get(loadId);
    if (pending === undefined) {
      const window = creditWindowOf(period, isoNow());
      // Settled here but perhaps not yet in the store: the store counts each once.
      const unstored = [...this.writer.unwritten()].filter((record) => countsToward(scope, record) && creditWindowOf(period, record.createdAt) === window);
      pending = this.store
        .spendOf(scope, creditWindowStart(window), unstored)
        .then((spentMicros) => {
          const spend: Spend = { period, window, spentMicros, heldMicros: 0 };
          this.spends.set(id, spend);
          return spend;
        })
        .finally(() => this.loading.delete(loadId));
      this.loading.set(loadId, pending);
    }
    return pending;
  }
}

function assertWithin(limit: SpendLimit, spend: Spend, amountMicros: number | undefined): void {
  roll(spend, creditWindowOf(spend.period, isoNow()));
  assertFits(limit.limit.amountMicros - spend.spentMicros - spend.heldMicros, amountMicros, limit.reason);
}

/** A new month began: nothing is spent in it yet, except what settles from now on. */
function roll(spend: Spend, window: string): void {
  if (isLaterWindow(window, spend.window)) {
    spend.window = window;
    spend.spentMicros = 0;
  }
}
