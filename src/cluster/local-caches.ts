// What this process keeps of the store for the request path (keys and accounts in the
// KeyCache, balances in the admission), and the one rule of how a change makes it stale.
// Changes made here are applied at once by the commands and announced to the other
// instances (shared mode); changes made elsewhere arrive through that announcement or the
// store's change feed and are applied the same way.
import type { KeyCache } from '../auth/key-cache.js';
import type { AdmissionService } from '../billing/admission.js';
import type { ApiKeyRecord, Change } from '../store/store.js';

/** What the commands tell the caches. */
export interface LocalCaches {
  /** A change committed here: applied now (a balance is read again before this resolves), and announced. */
  changed(change: Change): Promise<void>;
  /** A key revoked here: cached as revoked, so its next use is refused without a store read. */
  keyRevoked(key: ApiKeyRecord): void;
  /** A key renamed or its controls changed here: cached as it now is, and announced. */
  keyChanged(key: ApiKeyRecord): void;
}

/** The CLI runs beside no request path: its changes reach the instances by the feed. */
export const NO_LOCAL_CACHES: LocalCaches = { changed: async () => undefined, keyRevoked: () => undefined, keyChanged: () => undefined };

export class ProcessCaches implements LocalCaches {
  constructor(
    private readonly keyCache: KeyCache,
    private readonly admission: Pick<AdmissionService, 'balanceChanged'>,
    /** Tells the other instances at once (shared mode's change channel). */
    private readonly announce: (change: Change) => void = () => undefined,
    /** Told of every account change too (the alerts read the account's settings and budgets again). */
    private readonly accountChanged: (accountId: string) => void = () => undefined,
  ) {}

  /** A change made here or elsewhere: forgets what it made stale. */
  async apply({ kind, subjectId }: Change): Promise<void> {
    if (kind === 'key') this.keyCache.forgetKey(subjectId);
    else if (kind === 'account') {
      this.keyCache.forgetAccount(subjectId);
      this.accountChanged(subjectId);
    } else await this.admission.balanceChanged(subjectId);
  }

  async changed(change: Change): Promise<void> {
    this.announce(change);
    await this.apply(change);
  }

  keyRevoked(key: ApiKeyRecord): void {
    this.keyChanged(key);
  }

  keyChanged(key: ApiKeyRecord): void {
    this.keyCache.putKey(key.keyHash, key);
    this.announce({ kind: 'key', subjectId: key.id });
  }
}
