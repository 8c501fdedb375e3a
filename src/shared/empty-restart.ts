// A Redis that comes back empty (restarted without persistence, or a failover to an empty
// replica) lost the usage stream's entries the store did not have yet. Each instance keeps
// the settlements of the last few seconds and replays them when it sees the generation key
// gone or replaced; the store takes each usage record once (by id), so a replay of one it
// already has changes nothing there.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** What was settled in the last `keepMs` (at most `max` of them), oldest first. */
export class RecentSettlements<T> {
  private entries: { at: number; item: T }[] = [];
  /** Entries before this index are dropped; the array is compacted once they are half of it. */
  private head = 0;

  constructor(
    private readonly keepMs: number,
    private readonly max: number,
  ) {}

  add(item: T): void {
    const now = Date.now();
    this.entries.push({ at: now, item });
    while (this.head < this.entries.length && (this.entries[this.head]!.at < now - this.keepMs || this.entries.length - this.head > this.max)) this.head++;
    if (this.head > this.entries.length / 2) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  takeAll(): T[] {
    const items = this.entries.slice(this.head).map((entry) => entry.item);
    this.entries = [];
    this.head = 0;
    return items;
  }
}

/**
 * Checks the generation key at start and on every reconnection: the first instance to find
 * it missing sets one, and every instance that knew another calls `lost`.
 */
export function watchGeneration(redis: Redis, key: string, lost: () => void, onError: (err: unknown) => void): void {
  let known: string | null = null;
  const check = async (): Promise<void> => {
    await redis.set(key, randomUUID(), 'NX');
    const current = await redis.get(key);
    if (known !== null && current !== known) lost();
    known = current;
  };
  void check().catch(onError);
  redis.on('ready', () => void check().catch(onError));
}
