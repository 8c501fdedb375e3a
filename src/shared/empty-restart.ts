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

  constructor(
    private readonly keepMs: number,
    private readonly max: number,
  ) {}

  add(item: T): void {
    const now = Date.now();
    this.entries.push({ at: now, item });
    let old = 0;
    while (old < this.entries.length && (this.entries[old]!.at < now - this.keepMs || this.entries.length - old > this.max)) old++;
    if (old > 0) this.entries.splice(0, old);
  }

  takeAll(): T[] {
    const items = this.entries.map((entry) => entry.item);
    this.entries = [];
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
