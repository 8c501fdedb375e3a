// What this process keeps of the store for the request path (keys and accounts in the
// KeyCache, balances in the admission), and the one rule of how a change makes it stale.
// Changes made here are applied at once by the commands; changes made elsewhere (the CLI,
// another instance) arrive through the change feed and are applied the same way.
import type { KeyCache } from '../auth/key-cache.js';
import type { Admission } from '../billing/admission.js';
import type { ApiKeyRecord, ChangeKind } from '../store/store.js';

export interface Change {
  kind: ChangeKind;
  subjectId: string;
}

export interface LocalCaches {
  /** Forgets what `change` made stale; a balance is read again before this resolves. */
  apply(change: Change): Promise<void>;
  /** A key revoked here: cached as revoked, so its next use is refused without a store read. */
  keyRevoked(key: ApiKeyRecord): void;
}

/** The CLI runs beside no request path: its changes reach the instances by the feed. */
export const NO_LOCAL_CACHES: LocalCaches = { apply: async () => undefined, keyRevoked: () => undefined };

export class ProcessCaches implements LocalCaches {
  constructor(
    private readonly keyCache: KeyCache,
    private readonly admission: Admission,
  ) {}

  async apply({ kind, subjectId }: Change): Promise<void> {
    if (kind === 'key') this.keyCache.forgetKey(subjectId);
    else if (kind === 'account') this.keyCache.forgetAccount(subjectId);
    else await this.admission.balanceChanged(subjectId);
  }

  keyRevoked(key: ApiKeyRecord): void {
    this.keyCache.putKey(key.keyHash, key);
  }
}
