// Settled usage goes to the store off the request path: records queue in memory and are
// written in batches (one transaction each) every `flushIntervalMs`, or sooner when many
// are waiting, and on shutdown. A record is acknowledged only once its batch committed;
// a crash loses at most the queued (unbilled) records and never half a batch.
import { NotFoundInStoreError, type CappedCharge, type Store, type UsageRecord } from '../store/store.js';
import type { MemoryCreditBook } from './reservations.js';

export interface UsageWriterOptions {
  flushIntervalMs?: number;
  maxBatch?: number;
  onError: (err: unknown) => void;
  observer?: UsageWriteObserver;
}

/** Told of each committed batch (how many records, how long the store took) and of each charge cut at the balance. */
export interface UsageWriteObserver {
  batchWritten(records: number, seconds: number): void;
  chargeCapped(charge: CappedCharge): void;
}

export class UsageWriter {
  private queue: UsageRecord[] = [];
  /** The batch being written, out of the queue but not yet committed. */
  private writing: readonly UsageRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;
  observer: UsageWriteObserver | undefined;

  constructor(
    private readonly store: Store,
    private readonly book: MemoryCreditBook,
    private readonly options: UsageWriterOptions,
  ) {
    this.flushIntervalMs = options.flushIntervalMs ?? 100;
    this.maxBatch = options.maxBatch ?? 500;
    this.observer = options.observer;
  }

  start(): void {
    this.store.prepareUsageWrites();
    this.timer = setInterval(() => void this.flushInBackground(), this.flushIntervalMs);
    this.timer.unref();
  }

  enqueue(record: UsageRecord): void {
    this.queue.push(record);
    if (this.queue.length >= this.maxBatch) void this.flushInBackground();
  }

  /** Writes everything queued so far (tests and shutdown call this). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    while (this.queue.length > 0) {
      this.flushing = this.writeBatch().finally(() => (this.flushing = undefined));
      await this.flushing;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Settled records the store does not have yet: queued, or in the batch being written. */
  *unwritten(): Iterable<UsageRecord> {
    yield* this.writing;
    yield* this.queue;
  }

  private async flushInBackground(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = this.writeBatch().finally(() => (this.flushing = undefined));
    await this.flushing.catch(this.options.onError);
  }

  private writeBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    this.writing = batch;
    return this.book
      .commitSettled(batch, async () => {
        const startedAt = performance.now();
        const capped = await this.store.recordUsage(batch);
        this.writing = [];
        this.observer?.batchWritten(batch.length, (performance.now() - startedAt) / 1000);
        for (const charge of capped) this.observer?.chargeCapped(charge);
      })
      .catch((err: unknown) => {
        this.writing = [];
        if (err instanceof NotFoundInStoreError) {
          // An account deleted by hand would block every later batch; its records can
          // never be stored, so they are dropped (and reported), the rest retried.
          const gone = err.ref;
          this.queue.unshift(...batch.filter((record) => record.accountId !== gone));
        } else {
          // Keep the records (ids make a retry safe) and try again on the next tick.
          this.queue.unshift(...batch);
        }
        throw err;
      });
  }
}
