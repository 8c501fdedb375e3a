// Keys' credit limits in shared mode: each key with a limit has a count in Redis of what it
// spent in its window, beside its holds (scripts.ts: the *_KEY admission and settlement add
// to them). This module names those keys, starts a count from the store, and reads one.
import type { Redis } from 'ioredis';
import { creditWindowOf, creditWindowStart, type LimitedKey } from '../billing/key-credit.js';
import { isoNow } from '../clock.js';
import type { CreditSource } from '../store/queries.js';
import type { UsageRecord } from '../store/store.js';
import { LuaScript } from './lua-script.js';
import { KEY_MIRROR, KEY_SPENT } from './scripts.js';
import { streamedRecords } from './usage-stream.js';

const keyMirrorScript = new LuaScript(KEY_MIRROR);
const keySpentScript = new LuaScript(KEY_SPENT);

export interface KeySpendKeys {
  /** Hash: window, spent, reserved. */
  spend: string;
  /** Its holds: reservation id → expiry, and → micro-credits. */
  leases: string;
  amounts: string;
}

export class SharedKeySpend {
  /** Counts being started here, so the concurrent requests of a key start one. */
  private readonly counting = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: Redis,
    private readonly store: Pick<CreditSource, 'keySpend'>,
    private readonly prefix: string,
    private readonly usageStream: string,
  ) {}

  keys(keyId: string): KeySpendKeys {
    const base = `${this.prefix}:key:${keyId}`;
    return { spend: `${base}:spend`, leases: `${base}:leases`, amounts: `${base}:amounts` };
  }

  /**
   * Starts the count of a key's spending in `window`, unless another instance did: the
   * store's sum, with the key's records still in the usage stream (settled on any instance,
   * perhaps not yet stored) read first, so each charge settled before counts once.
   */
  count(key: LimitedKey, window: string): Promise<void> {
    const id = `${key.id}:${window}`;
    let pending = this.counting.get(id);
    if (pending === undefined) {
      pending = this.start(key, window).finally(() => this.counting.delete(id));
      this.counting.set(id, pending);
    }
    return pending;
  }

  /** What a key spent in its credit limit's current window, as admissions count it. */
  async spent(key: LimitedKey): Promise<number> {
    const window = creditWindowOf(key.limit.period, isoNow());
    const read = async (): Promise<number> => Number(await keySpentScript.run(this.redis, [this.keys(key.id).spend], [window]));
    let spent = await read();
    if (spent < 0) {
      await this.count(key, window);
      spent = await read();
    }
    return Math.max(0, spent);
  }

  private async start({ id, limit }: LimitedKey, window: string): Promise<void> {
    const unstored: UsageRecord[] = [];
    for await (const record of streamedRecords(this.redis, this.usageStream)) {
      if (record.keyId === id && creditWindowOf(limit.period, record.createdAt) === window) unstored.push(record);
    }
    const spent = await this.store.keySpend(id, creditWindowStart(window), unstored);
    await keyMirrorScript.run(this.redis, [this.keys(id).spend], [window, spent]);
  }
}
