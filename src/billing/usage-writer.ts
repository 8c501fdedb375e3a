// Settled usage goes to the store off the event loop, by group commit: a record queued
// starts a batch (one transaction) at once unless one is being written, and what queues
// meanwhile goes in the next batch, started as soon as that one commits. Each record's
// promise resolves at its batch's commit: the answer's last byte waits for it, so a crash
// loses only charges of answers never fully sent, and never half a batch. A batch that
// failed is retried every `flushIntervalMs`.
import type { UsageSink } from '../store/queries.js';
import { NotFoundInStoreError, type CappedCharge, type UsageRecord } from '../store/store.js';
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
  /** The records of a committed batch (the alerts check the accounts they charged). */
  usageStored?(records: readonly UsageRecord[]): void;
}

/** A record waiting for the store, and what to tell once its batch committed. */
interface Queued {
  record: UsageRecord;
  stored: () => void;
}

export class UsageWriter {
  private queue: Queued[] = [];
  /** The batch being written, out of the queue but not yet committed. */
  private writing: readonly Queued[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** A batch is to start on the next turn of the event loop, with every record queued in this one. */
  private startSoon = false;
  private readonly flushIntervalMs: number;
  private readonly maxBatch: number;
  observer: UsageWriteObserver | undefined;

  constructor(
    private readonly store: UsageSink,
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

  /** Queues a record; resolves once the store has committed it. */
  enqueue(record: UsageRecord): Promise<void> {
    return new Promise((stored) => {
      this.queue.push({ record, stored });
      this.commitSoon();
    });
  }

  private commitSoon(): void {
    if (this.flushing || this.startSoon) return;
    this.startSoon = true;
    setImmediate(() => {
      this.startSoon = false;
      void this.flushInBackground();
    });
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
    for (const queued of this.writing) yield queued.record;
    for (const queued of this.queue) yield queued.record;
  }

  private async flushInBackground(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = this.writeBatch().finally(() => (this.flushing = undefined));
    try {
      await this.flushing;
      // Committed: what queued meanwhile is the next group.
      if (this.queue.length > 0) this.commitSoon();
    } catch (err) {
      this.options.onError(err);
    }
  }

  private writeBatch(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    this.writing = batch;
    const records = batch.map((queued) => queued.record);
    return this.book
      .commitSettled(records, async () => {
        const startedAt = performance.now();
        const capped = await this.store.recordUsage(records);
        this.writing = [];
        for (const queued of batch) queued.stored();
        this.observer?.batchWritten(batch.length, (performance.now() - startedAt) / 1000);
        for (const charge of capped) this.observer?.chargeCapped(charge);
        this.observer?.usageStored?.(records);
      })
      .catch((err: unknown) => {
        this.writing = [];
        if (err instanceof NotFoundInStoreError) {
          // An account deleted by hand would block every later batch; its records can
          // never be stored, so they are dropped (and reported, their answers let go), the rest retried.
          const gone = err.ref;
          for (const queued of batch) if (queued.record.accountId === gone) queued.stored();
          this.queue.unshift(...batch.filter((queued) => queued.record.accountId !== gone));
        } else {
          // Keep the records (ids make a retry safe) and try again on the next tick.
          this.queue.unshift(...batch);
        }
        throw err;
      });
  }
}
