// "Last used" stamps for keys, collected in memory and written in batches so that
// authentication never waits on a store write.
import type { KeyStampSink } from '../store/queries.js';

export class LastUsedTracker {
  /** key id → Unix ms; formatted only when flushed, once per key per batch. */
  private pending = new Map<string, number>();

  constructor(private readonly store: KeyStampSink) {}

  touch(keyId: string): void {
    this.pending.set(keyId, Date.now());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = new Map([...this.pending].map(([id, ms]) => [id, new Date(ms).toISOString()]));
    this.pending = new Map();
    await this.store.touchKeys(batch);
  }
}
