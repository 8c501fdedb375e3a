// The refused half of the customer's request log (the other half is the usage records):
// API requests of a known account refused before any model. Queued in memory and written
// in batches off the request path; what is older than `request_log.retention_days` is
// swept now and then.
import { newTimeOrderedId } from '../ids.js';
import type { RefusedRequest } from '../store/request-log-store.js';
import type { RefusalSink } from '../store/queries.js';

/** A store that cannot keep up loses refusals past this, not memory. */
const MAX_PENDING = 10_000;
/** refused_requests.reason's width (a 422 naming many fields is cut). */
const REASON_CHARS = 60;
const DAY_MS = 24 * 60 * 60 * 1000;

export class RefusalLog {
  private pending: RefusedRequest[] = [];

  constructor(
    private readonly store: RefusalSink,
    private readonly retentionDays: number,
  ) {}

  add(refusal: Omit<RefusedRequest, 'id' | 'createdAt'>): void {
    if (this.pending.length >= MAX_PENDING) return;
    const reason = refusal.reason?.slice(0, REASON_CHARS) ?? null;
    this.pending.push({ ...refusal, reason, id: newTimeOrderedId('refused'), createdAt: new Date().toISOString() });
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    await this.store.recordRefusals(batch);
  }

  /** Deletes what has outlived the retention. */
  prune(nowMs = Date.now()): Promise<number> {
    return this.store.pruneRefusals(new Date(nowMs - this.retentionDays * DAY_MS).toISOString());
  }
}
