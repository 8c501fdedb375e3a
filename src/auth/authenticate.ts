// Step 1 of the request path: Authorization header → key → account, cache first.
import { InvalidApiKeyError, KeyRevokedError } from '../errors.js';
import type { OrgBudget, OrgStore } from '../store/org-store.js';
import type { AccountQueries, KeyQueries } from '../store/queries.js';
import type { Account, ApiKeyRecord } from '../store/store.js';
import { hashApiKey, isWellFormedApiKey } from './api-key.js';
import { parseBearer } from './bearer.js';
import type { KeyCache } from './key-cache.js';

export interface Principal {
  key: ApiKeyRecord;
  account: Account;
  /** An organisation's monthly budgets (billing/spend-limit.ts); none for a personal account. */
  budgets: readonly OrgBudget[];
}

// No secret is kept: the key is checked and hashed (SHA-256, about 1 µs) on every request
// and everything after works on the hash, so a heap dump holds no usable key.
export class Authenticator {
  constructor(
    private readonly store: Pick<KeyQueries, 'findKeyByHash'> & Pick<AccountQueries, 'findAccount'> & Pick<OrgStore, 'listBudgets'>,
    private readonly cache: KeyCache,
  ) {}

  /**
   * The principal, synchronously when key and account are cached (the hot path: no
   * promise, no await), else after loading them from the store. Throws (or rejects)
   * with the 401 errors.
   */
  authenticate(authorization: string | undefined): Principal | Promise<Principal> {
    const secret = parseBearer(authorization);
    // The checksum turns away typos and forgeries without touching cache or store.
    if (!isWellFormedApiKey(secret)) throw new InvalidApiKeyError();
    const hash = hashApiKey(secret);
    const key = this.cache.getKey(hash);
    if (key === undefined) return this.loadKey(hash).then((loaded) => this.principalOf(loaded));
    return this.principalOf(key);
  }

  private principalOf(key: ApiKeyRecord | null): Principal | Promise<Principal> {
    if (key === null) throw new InvalidApiKeyError();
    if (key.revokedAt !== null) throw new KeyRevokedError();
    const cached = this.cache.getAccount(key.accountId);
    if (cached) return { key, account: cached.account, budgets: cached.budgets };
    return this.loadAccount(key.accountId).then((loaded) => ({ key, account: loaded.account, budgets: loaded.budgets }));
  }

  private async loadKey(hash: string): Promise<ApiKeyRecord | null> {
    const key = (await this.store.findKeyByHash(hash)) ?? null;
    this.cache.putKey(hash, key ?? undefined);
    return key;
  }

  private async loadAccount(accountId: string): Promise<{ account: Account; budgets: readonly OrgBudget[] }> {
    const account = await this.store.findAccount(accountId);
    // A key always belongs to an account (foreign key); a missing one means the row was
    // deleted by hand, which leaves the key unusable.
    if (!account) throw new InvalidApiKeyError();
    const cached = { account, budgets: account.kind === 'org' ? await this.store.listBudgets(accountId) : [] };
    this.cache.putAccount(cached);
    return cached;
  }
}
