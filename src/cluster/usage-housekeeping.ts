// What every instance does to the usage tables now and then (at start, then hourly): make
// the coming months' partitions before any write needs them (PostgreSQL), and remove raw
// usage records past `usage.retention_days` when it is set. Both are idempotent, so
// instances doing them at once only repeat each other's work.
import { monthEnd, monthsAhead } from '../store/partitions.js';
import type { UsageDataStore } from '../store/usage-data-store.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class UsageHousekeeping {
  constructor(
    private readonly store: Pick<UsageDataStore, 'ensureUsagePartitions' | 'pruneUsage'>,
    /** Undefined: keep every record. */
    private readonly retentionDays: number | undefined,
  ) {}

  async run(nowMs = Date.now()): Promise<void> {
    const now = new Date(nowMs).toISOString();
    await this.store.ensureUsagePartitions(now, monthEnd(monthsAhead(now).at(-1)!));
    if (this.retentionDays !== undefined) await this.store.pruneUsage(new Date(nowMs - this.retentionDays * DAY_MS).toISOString());
  }
}
