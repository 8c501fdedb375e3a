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

export class Authenticator {
  constructor(
    private readonly store: Store,
    private readonly cache: KeyCache,
    private readonly lastUsed: LastUsedTracker,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Principal> {
    const secret = parseBearer(authorization);
    // The checksum turns away typos and forgeries without touching cache or store.
    if (!isWellFormedApiKey(secret)) throw new InvalidApiKeyError();
    const hash = hashApiKey(secret);

    let key = this.cache.getKey(hash);
    if (key === undefined) {
      key = (await this.store.findKeyByHash(hash)) ?? null;
      this.cache.putKey(hash, key ?? undefined);
    }
    if (key === null) throw new InvalidApiKeyError();
    if (key.revokedAt !== null) throw new KeyRevokedError();

    const account = this.cache.getAccount(key.accountId) ?? (await this.loadAccount(key.accountId));
    this.lastUsed.touch(key.id);
    return { key, account };
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
