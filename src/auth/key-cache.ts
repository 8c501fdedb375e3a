// In-process caches for the hot path: key hash → key, account id → account. Entries are
// dropped when the change feed (cluster/change-feed.ts) reports a revocation, suspension,
// tier, membership or budget change, so no request waits on the store once a key has been seen.
import type { OrgBudget } from '../store/org-store.js';
import type { Account, ApiKeyRecord } from '../store/store.js';

/** An account as the hot path needs it: with its organisation's budgets (none for a person). */
export interface CachedAccount {
  account: Account;
  budgets: readonly OrgBudget[];
}

/** Cap on remembered unknown hashes, so a flood of forged keys cannot grow memory. */
const MAX_NEGATIVE_ENTRIES = 10_000;

export class KeyCache {
  private readonly keysByHash = new Map<string, ApiKeyRecord>();
  private readonly hashById = new Map<string, string>();
  private readonly unknownHashes = new Set<string>();
  private readonly accounts = new Map<string, CachedAccount>();

  getKey(hash: string): ApiKeyRecord | null | undefined {
    const key = this.keysByHash.get(hash);
    if (key) return key;
    return this.unknownHashes.has(hash) ? null : undefined;
  }

  putKey(hash: string, key: ApiKeyRecord | undefined): void {
    if (key) {
      this.keysByHash.set(hash, key);
      this.hashById.set(key.id, hash);
      this.unknownHashes.delete(hash);
      return;
    }
    if (this.unknownHashes.size >= MAX_NEGATIVE_ENTRIES) this.unknownHashes.clear();
    this.unknownHashes.add(hash);
  }

  getAccount(accountId: string): CachedAccount | undefined {
    return this.accounts.get(accountId);
  }

  putAccount(cached: CachedAccount): void {
    this.accounts.set(cached.account.id, cached);
  }

  forgetKey(keyId: string): void {
    const hash = this.hashById.get(keyId);
    if (hash === undefined) return;
    this.keysByHash.delete(hash);
    this.hashById.delete(keyId);
  }

  forgetAccount(accountId: string): void {
    this.accounts.delete(accountId);
  }
}
