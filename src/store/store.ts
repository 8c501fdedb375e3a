// The store as the app sees it, in domain words. One implementation (kysely-store.ts)
// serves SQLite and PostgreSQL.

export type AccountStatus = 'active' | 'suspended';
export type SubscriptionStatus = 'active' | 'past_due' | 'canceled' | 'inactive';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  status: AccountStatus;
  tier: string;
  subscriptionStatus: SubscriptionStatus;
  subscriptionPeriodEnd: string | null;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export type ChangeKind = 'key' | 'account';

export interface ChangeEvent {
  id: number;
  kind: ChangeKind;
  subjectId: string;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<string[]>;
  close(): Promise<void>;

  createAccount(input: { email: string; name?: string | null; tier: string }): Promise<Account>;
  /** By id, or by email when the reference contains an `@`. */
  findAccount(idOrEmail: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  setAccountStatus(accountId: string, status: AccountStatus): Promise<Account>;
  setAccountTier(accountId: string, tier: string): Promise<Account>;

  createApiKey(input: NewApiKey): Promise<ApiKeyRecord>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findKeyById(keyId: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Idempotent; returns the key as stored afterwards. */
  revokeKey(keyId: string): Promise<ApiKeyRecord>;
  /** Batched "last used" stamps, written off the request path. */
  touchKeys(lastUsedAtById: ReadonlyMap<string, string>): Promise<void>;

  latestChangeId(): Promise<number>;
  changesAfter(id: number): Promise<ChangeEvent[]>;
  pruneChanges(olderThan: Date): Promise<void>;
}

export class NotFoundInStoreError extends Error {
  constructor(what: string, ref: string) {
    super(`no ${what} ${JSON.stringify(ref)}`);
    this.name = 'NotFoundInStoreError';
  }
}
