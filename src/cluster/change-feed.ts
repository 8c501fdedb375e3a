// Instances learn of revocations, suspensions and tier changes made elsewhere (the CLI,
// another instance) by polling the store's change_events table: one indexed query per
// interval, so a change takes effect everywhere within about `intervalMs`.
import type { ChangeFeedSource } from '../store/queries.js';
import type { ChangeEvent } from '../store/store.js';

/** Applies one change; a poll ends once every listener call it made has settled. */
export type ChangeListener = (event: ChangeEvent) => void | Promise<void>;

const PRUNE_AFTER_MS = 60 * 60 * 1000;

export class ChangeFeed {
  private lastSeenId = 0;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private lastPruneMs = Date.now();

  constructor(
    private readonly store: ChangeFeedSource,
    private readonly listener: ChangeListener,
    private readonly onError: (err: unknown) => void,
    private readonly intervalMs = 250,
  ) {}

  async start(): Promise<void> {
    this.lastSeenId = await this.store.latestChangeId();
    this.timer = setInterval(() => {
      if (!this.polling) void this.poll();
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
  }

  /**
   * Applies every change recorded until now: after a poll already running (whose changes
   * are then applied in full too), one more, so a caller sees every change it made.
   */
  async poll(): Promise<void> {
    while (this.polling) await this.polling;
    this.polling = this.pollOnce().finally(() => (this.polling = undefined));
    await this.polling;
  }

  private async pollOnce(): Promise<void> {
    try {
      for (const event of await this.store.changesAfter(this.lastSeenId)) {
        this.lastSeenId = event.id;
        await this.listener(event);
      }
      if (Date.now() - this.lastPruneMs > PRUNE_AFTER_MS) {
        this.lastPruneMs = Date.now();
        await this.store.pruneChanges(new Date(Date.now() - PRUNE_AFTER_MS));
      }
    } catch (err) {
      this.onError(err);
    }
  }
}
