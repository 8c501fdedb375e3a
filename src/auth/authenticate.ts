// Step 1 of the request path: Authorization header → key → account, cache first.
import { InvalidApiKeyError, KeyRevokedError } from '../errors.js';
import type { Account, ApiKeyRecord, Store } from '../store/store.js';
import { hashApiKey, isWellFormedApiKey } from './api-key.js';
import { parseBearer } from './bearer.js';
import type { KeyCache } from './key-cache.js';
import type { LastUsedTracker } from './last-used.js';

export interface Principal {
  key: ApiKeyRecord;
  account: Account;
}

// Secrets seen recently → their hash, so a busy key skips checksum and SHA-256 on each
// request. Bounded, and only filled with keys that passed the checksum.
const HASH_MEMO_MAX_ENTRIES = 10_000;

export class Authenticator {
  private readonly hashBySecret = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly cache: KeyCache,
    private readonly lastUsed: LastUsedTracker,
  ) {}

  /**
   * The principal, synchronously when key and account are cached (the hot path: no
   * promise, no await), else after loading them from the store. Throws (or rejects)
   * with the 401 errors.
   */
  authenticate(authorization: string | undefined): Principal | Promise<Principal> {
    const secret = parseBearer(authorization);
    const hash = this.hashBySecret.get(secret) ?? this.hashNewSecret(secret);
    const key = this.cache.getKey(hash);
    if (key === undefined) return this.loadKey(hash).then((loaded) => this.principalOf(loaded));
    return this.principalOf(key);
  }

  private principalOf(key: ApiKeyRecord | null): Principal | Promise<Principal> {
    if (key === null) throw new InvalidApiKeyError();
    if (key.revokedAt !== null) throw new KeyRevokedError();
    this.lastUsed.touch(key.id);
    const account = this.cache.getAccount(key.accountId);
    if (account) return { key, account };
    return this.loadAccount(key.accountId).then((loaded) => ({ key, account: loaded }));
  }

  private async loadKey(hash: string): Promise<ApiKeyRecord | null> {
    const key = (await this.store.findKeyByHash(hash)) ?? null;
    this.cache.putKey(hash, key ?? undefined);
    return key;
  }

  private hashNewSecret(secret: string): string {
    // The checksum turns away typos and forgeries without touching cache or store.
    if (!isWellFormedApiKey(secret)) throw new InvalidApiKeyError();
    const hash = hashApiKey(secret);
    if (this.hashBySecret.size >= HASH_MEMO_MAX_ENTRIES) this.hashBySecret.clear();
    this.hashBySecret.set(secret, hash);
    return hash;
  }

  private async loadAccount(accountId: string): Promise<Account> {
    const account = await this.store.findAccount(accountId);
    // A key always belongs to an account (foreign key); a missing one means the row was
    // deleted by hand, which leaves the key unusable.
    if (!account) throw new InvalidApiKeyError();
    this.cache.putAccount(account);
    return account;
  }
}
