// Shared mode's usage writer: settled records wait in a Redis stream (SETTLE appends them)
// until the store has them, so the records of an instance that crashed are written by
// another. Every instance reads the stream in one consumer group; a batch is opened in
// Redis (its accounts' balances are not read while it is written), written to the store
// (idempotent by record id) with each account's balance read in the same transaction, then
// acknowledged by ACK, which moves its charges from `pending` into the mirrored balance.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { UsageWriteObserver } from '../billing/usage-writer.js';
import type { UsageStreamSink } from '../store/queries.js';
import { LuaScript } from './lua-script.js';
import type { SharedState } from './shared-state.js';
import { ACK, OPEN_BATCH } from './upkeep-scripts.js';
import { readEntry, type StreamEntry } from './usage-stream.js';

const openBatchScript = new LuaScript(OPEN_BATCH);
const ackScript = new LuaScript(ACK);

const GROUP = 'store-writers';
const BATCH = 500;
/** A blocking read returns at least this often, so close() is prompt. */
const BLOCK_MS = 200;
/**
 * A batch smaller than BATCH waits until this long after the previous one began: the
 * store's cost is mostly per transaction, so a few large batches cost far less per record
 * than many small ones (the embedded writer batches every 100 ms too).
 */
const GATHER_MS = 100;
/** How often to look for entries other consumers read but did not acknowledge. */
const CLAIM_EVERY_MS = 5_000;
/**
 * An open batch that was never acknowledged (its writer died, or the store failed) stops
 * holding back its accounts' balance reads after this long.
 */
const OPEN_BATCH_MS = 10_000;

export interface UsageStreamWriterOptions {
  /** This instance's name in the consumer group. */
  consumer: string;
  /** Entries another consumer read but did not acknowledge for this long are taken over. */
  claimIdleMs: number;
  onError: (err: unknown) => void;
  observer?: UsageWriteObserver;
}

export class UsageStreamWriter {
  private running = false;
  private loop: Promise<void> | undefined;
  /** Whether this consumer may hold entries it read but did not store (at start, after a failure). */
  private mayHoldOwn = true;
  private lastClaimAt = 0;

  /** `reader` is a connection of its own: blocking reads hold it. */
  constructor(
    private readonly shared: SharedState,
    private readonly reader: Redis,
    private readonly store: UsageStreamSink,
    private readonly options: UsageStreamWriterOptions,
  ) {
    this.observer = options.observer;
  }

  observer: UsageWriteObserver | undefined;

  async start(): Promise<void> {
    await this.createGroup();
    this.running = true;
    this.loop = this.run();
  }

  /**
   * The consumer group, from the start of the stream: entries left by instances that are
   * gone are ours too. Made again when Redis lost it (restarted empty): the settlements
   * appended since, retried ones among them, are in the new stream, and are written.
   */
  private async createGroup(): Promise<void> {
    try {
      await this.shared.redis.xgroup('CREATE', this.shared.usageStream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
  }

  async close(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.flush();
  }

  /**
   * Writes what is waiting now: new entries, then this consumer's unacknowledged ones. In
   * that order: the loop reads on the same connection, and between a read of this
   * consumer's entries and a read of new ones it could take a new entry that neither read
   * sees; taken after the read of new ones, an entry is among this consumer's for the second.
   */
  async flush(): Promise<void> {
    while ((await this.writeBatch(await this.read('>', 0))) > 0);
    while ((await this.writeBatch(await this.read('0', 0))) > 0);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const startedAt = Date.now();
        if (startedAt - this.lastClaimAt > Math.min(CLAIM_EVERY_MS, this.options.claimIdleMs / 2)) {
          await this.claimAbandoned();
          this.mayHoldOwn = true;
        }
        // Our own unacknowledged entries first (claimed, or left by a failed write), then new ones.
        if (this.mayHoldOwn) {
          const mine = await this.read('0', 0);
          if (mine.length > 0) {
            await this.writeBatch(mine);
            continue;
          }
          this.mayHoldOwn = false;
        }
        const written = await this.writeBatch(await this.read('>', BLOCK_MS));
        const waitMs = GATHER_MS - (Date.now() - startedAt);
        if (written > 0 && written < BATCH && waitMs > 0 && this.running) await sleep(waitMs);
      } catch (err) {
        this.mayHoldOwn = true;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) {
          await this.createGroup().catch(this.options.onError);
          continue;
        }
        this.options.onError(err);
        await sleep(500);
      }
    }
  }

  private async read(from: '0' | '>', blockMs: number): Promise<StreamEntry[]> {
    const args: (string | number)[] = ['GROUP', GROUP, this.options.consumer, 'COUNT', BATCH];
    if (blockMs > 0) args.push('BLOCK', blockMs);
    args.push('STREAMS', this.shared.usageStream, from);
    const reply = (await (this.reader.xreadgroup as (...a: (string | number)[]) => Promise<unknown>)(...args)) as [string, StreamEntry[]][] | null;
    return reply?.[0]?.[1] ?? [];
  }

  /** Entries of consumers that stopped (crashed) become this consumer's. */
  private async claimAbandoned(): Promise<void> {
    this.lastClaimAt = Date.now();
    let cursor = '0-0';
    do {
      const [next] = (await this.shared.redis.xautoclaim(this.shared.usageStream, GROUP, this.options.consumer, this.options.claimIdleMs, cursor, 'COUNT', BATCH, 'JUSTID')) as [string, ...unknown[]];
      cursor = next;
    } while (cursor !== '0-0');
  }

  /** Stores a batch and acknowledges it; returns how many entries it held. */
  private async writeBatch(entries: StreamEntry[]): Promise<number> {
    // A claimed entry deleted meanwhile reads back without fields: nothing to write.
    const live = entries.filter(([, fields]) => fields !== null && fields.length > 0);
    if (live.length === 0) {
      if (entries.length > 0) await this.shared.redis.xack(this.shared.usageStream, GROUP, ...entries.map(([id]) => id));
      return entries.length;
    }
    const parsed = live.map(([id, fields]) => ({ id, ...readEntry(fields) }));
    const accountIds = [...new Set(parsed.map((entry) => entry.accountId))];
    const accountKeys = accountIds.map((id) => this.shared.keys(id));
    const token = randomUUID();
    await openBatchScript.run(this.shared.redis, accountKeys.map((keys) => keys.writes), [token, OPEN_BATCH_MS]);

    const startedAt = performance.now();
    // Each balance is read under the batch's lock on it: exactly what this commit made it.
    const { capped, balances } = await this.store.transaction(async (tx) => {
      const capped = await tx.recordUsage(parsed.map((entry) => entry.record));
      const balances = [];
      for (const id of accountIds) balances.push(await tx.versionedBalanceOf(id));
      return { capped, balances };
    });
    this.observer?.batchWritten(parsed.length, (performance.now() - startedAt) / 1000);
    for (const charge of capped) this.observer?.chargeCapped(charge);
    this.observer?.usageStored?.(parsed.map((entry) => entry.record));

    const index = new Map(accountIds.map((id, i) => [id, i + 1]));
    const args: (string | number)[] = [GROUP, token, accountIds.length];
    for (const balance of balances) args.push(balance.version, balance.balanceMicros);
    for (const entry of parsed) args.push(entry.id, index.get(entry.accountId)!, entry.pendingMicros);
    const keys = [this.shared.usageStream, ...accountKeys.flatMap((keys) => [keys.credit, keys.writes, keys.landed])];
    await ackScript.run(this.shared.redis, keys, args);
    return entries.length;
  }
}
