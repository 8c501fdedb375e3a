// Limits on spending in shared mode (a key's credit limit, a member's or an organisation's
// budget: billing/spend-limit.ts): each limit has a count in Redis of what its scope spent
// in its window, beside its holds (counter-scripts.ts: the `budget` rows of admission and
// settlement add to them). This module names those keys, starts a count from the store,
// and reads one.
import type { Redis } from 'ioredis';
import { countsToward, creditWindowOf, creditWindowStart, type SpendLimit } from '../billing/spend-limit.js';
import { isoNow } from '../clock.js';
import type { CreditSource } from '../store/queries.js';
import type { UsageRecord } from '../store/store.js';
import { LuaScript } from './lua-script.js';
import { KEY_MIRROR, KEY_SPENT } from './scripts.js';
import { streamedRecords } from './usage-stream.js';

const keyMirrorScript = new LuaScript(KEY_MIRROR);
const keySpentScript = new LuaScript(KEY_SPENT);

export interface SpendKeys {
  /** Hash: window, spent, reserved. */
  spend: string;
  /** Its holds: reservation id → expiry, and → micro-credits. */
  leases: string;
  amounts: string;
}

export class SharedSpend {
  /** Counts being started here, so the concurrent requests under a limit start one. */
  private readonly counting = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: Redis,
    private readonly store: Pick<CreditSource, 'spendOf'>,
    private readonly prefix: string,
    private readonly usageStream: string,
  ) {}

  /** A limit's keys in Redis, by its id (`key:ID` names a key's, as before budgets). */
  keys(limitId: string): SpendKeys {
    const base = `${this.prefix}:${limitId}`;
    return { spend: `${base}:spend`, leases: `${base}:leases`, amounts: `${base}:amounts` };
  }

  /**
   * Starts the count of a limit's spending in `window`, unless another instance did: the
   * store's sum, with its scope's records still in the usage stream (settled on any instance,
   * perhaps not yet stored) read first, so each charge settled before counts once.
   */
  count(limit: SpendLimit, window: string): Promise<void> {
    const id = `${limit.id}:${window}`;
    let pending = this.counting.get(id);
    if (pending === undefined) {
      pending = this.start(limit, window).finally(() => this.counting.delete(id));
      this.counting.set(id, pending);
    }
    return pending;
  }

  /** What a limit's scope spent in its current window, as admissions count it. */
  async spent(limit: SpendLimit): Promise<number> {
    const window = creditWindowOf(limit.limit.period, isoNow());
    const read = async (): Promise<number> => Number(await keySpentScript.run(this.redis, [this.keys(limit.id).spend], [window]));
    let spent = await read();
    if (spent < 0) {
      await this.count(limit, window);
      spent = await read();
    }
    return Math.max(0, spent);
  }

  private async start({ id, scope, limit }: SpendLimit, window: string): Promise<void> {
    const unstored: UsageRecord[] = [];
    for await (const record of streamedRecords(this.redis, this.usageStream)) {
      if (countsToward(scope, record) && creditWindowOf(limit.period, record.createdAt) === window) unstored.push(record);
    }
    const spent = await this.store.spendOf(scope, creditWindowStart(window), unstored);
    await keyMirrorScript.run(this.redis, [this.keys(id).spend], [window, spent]);
  }
}
