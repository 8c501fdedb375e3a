// "Last used" stamps for keys, collected in memory and written in batches so that
// authentication never waits on a store write.
import type { Store } from '../store/store.js';

export class LastUsedTracker {
  private pending = new Map<string, string>();

  constructor(private readonly store: Store) {}

  touch(keyId: string): void {
    this.pending.set(keyId, new Date().toISOString());
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await this.store.touchKeys(batch);
  }
}
