// The domain's write operations. The dashboard, the CLI (and later the admin API and
// payment webhooks) change accounts, keys and credits only through these. Each is one
// store transaction that writes the change and its change event (so every instance
// follows), then brings this process's caches up to date at once.
import { generateApiKey } from '../auth/api-key.js';
import { canonicalRedemptionCode, hashRedemptionCode } from '../billing/redemption-code.js';
import { NO_LOCAL_CACHES, type Change, type LocalCaches } from '../cluster/local-caches.js';
import { CONFIRM_LINK_TTL_MS, hashAccountToken, newLinkToken, newResetToken } from '../dashboard/account-links.js';
import { Refusal } from '../errors.js';
import type {
  Account,
  AccountStatus,
  ApiKeyRecord,
  LedgerEntry,
  NewSignUp,
  RedeemOutcome,
  Store,
} from '../store/store.js';

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The only time the secret exists outside the client: show it once. */
  secret: string;
}

export interface NewAccount {
  email: string;
  name: string | null;
  tier: string;
  /** Granted with the account, as a 'grant' ledger entry; 0 for none. */
  creditsMicros: number;
  creditsReason: string;
}

export interface CreditChange {
  accountId: string;
  /** Positive adds credit; an adjustment may be negative, never below a zero balance. */
  amountMicros: number;
  reason: string;
}

export class Commands {
  constructor(
    private readonly store: Store,
    private readonly caches: LocalCaches = NO_LOCAL_CACHES,
  ) {}

  /** An operator's account, with its first credits, all or nothing. Throws EmailTakenError. */
  async createAccount(input: NewAccount): Promise<{ account: Account; balanceMicros: number }> {
    return this.store.transaction(async (tx) => {
      const account = await tx.createAccount(input);
      if (input.creditsMicros === 0) return { account, balanceMicros: 0 };
      const { balanceMicros } = await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: input.creditsMicros, reason: input.creditsReason });
      return { account, balanceMicros };
    });
  }

  /** A customer's own sign-up: account, password and sign-up credits at once. Throws EmailTakenError. */
  signUp(input: NewSignUp): Promise<Account> {
    return this.store.signUp(input);
  }

  setPassword(accountId: string, passwordHash: string): Promise<void> {
    return this.store.setPasswordHash(accountId, passwordHash);
  }

  /** A one-time password-reset token for the account (the link's secret; the store keeps its hash). */
  async issuePasswordReset(accountId: string): Promise<{ token: string; expiresAt: string }> {
    const { token, stored } = newResetToken(accountId);
    await this.store.createAccountToken(stored);
    return { token, expiresAt: stored.expiresAt };
  }

  /** A sign-up kept until its owner opens the link mailed to the address; returns the link's token. */
  async requestSignUp(input: { email: string; name: string | null; passwordHash: string }): Promise<string> {
    const { token, tokenHash } = newLinkToken();
    const nowMs = Date.now();
    const createdAt = new Date(nowMs).toISOString();
    await this.store.createPendingSignUp({ tokenHash, ...input, createdAt, expiresAt: new Date(nowMs + CONFIRM_LINK_TTL_MS).toISOString() });
    return token;
  }

  /**
   * The owner opened the confirmation link: the account is created now, with its sign-up
   * credits. Undefined when the token is unknown, used or expired; throws EmailTakenError
   * when the address got an account meanwhile.
   */
  async confirmSignUp(token: string, account: { tier: string; creditsMicros: number }): Promise<Account | undefined> {
    const pending = await this.store.takePendingSignUp(hashAccountToken(token), new Date().toISOString());
    if (pending === undefined) return undefined;
    return this.signUp({ ...pending, ...account });
  }

  /**
   * Sets the password the reset link's holder chose and signs the account out everywhere.
   * Undefined when the token is unknown, used or expired.
   */
  resetPassword(token: string, passwordHash: string): Promise<string | undefined> {
    return this.store.resetPassword(hashAccountToken(token), passwordHash, new Date().toISOString());
  }

  async setStatus(accountId: string, status: AccountStatus): Promise<Account> {
    const account = await this.store.setAccountStatus(accountId, status);
    await this.caches.changed({ kind: 'account', subjectId: accountId });
    return account;
  }

  async setTier(accountId: string, tier: string): Promise<Account> {
    const account = await this.store.setAccountTier(accountId, tier);
    await this.caches.changed({ kind: 'account', subjectId: accountId });
    return account;
  }

  grantCredits(change: CreditChange): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('grant', change);
  }

  /** Throws BalanceWouldGoNegativeError rather than take the balance below zero. */
  adjustCredits(change: CreditChange): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('adjustment', change);
  }

  /** A code typed by a customer; anything but a first redemption of a live code is refused. */
  async redeemCode(accountId: string, typed: string): Promise<Extract<RedeemOutcome, { outcome: 'redeemed' }>> {
    const canonical = canonicalRedemptionCode(typed);
    const result = canonical ? await this.store.redeemCode(accountId, hashRedemptionCode(canonical), new Date().toISOString()) : undefined;
    if (result?.outcome === 'redeemed') {
      await this.caches.changed({ kind: 'balance', subjectId: accountId });
      return result;
    }
    if (result?.outcome === 'expired') throw new Refusal('code_expired');
    if (result?.outcome === 'already_redeemed') throw new Refusal('code_redeemed');
    throw new Refusal('code_unknown');
  }

  async createKey(accountId: string, name: string): Promise<CreatedKey> {
    const key = generateApiKey();
    const record = await this.store.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
    return { record, secret: key.secret };
  }

  /** Revokes a key by id (the operator), or only among `accountId`'s keys (its owner). */
  async revokeKey(keyId: string, ownerId?: string): Promise<ApiKeyRecord> {
    const key = ownerId === undefined ? await this.store.revokeKey(keyId) : await this.store.revokeAccountKey(ownerId, keyId);
    if (!key) throw new Refusal('key_not_found');
    this.caches.keyRevoked(key);
    return key;
  }

  /**
   * A payment provider's event: `write` records it and its effects in one transaction, and
   * says what it changed; this process's caches (and, by announcement, the others') follow
   * once it committed.
   */
  async applyPayment<T>(write: (tx: Store) => Promise<{ result: T; changes: Change[] }>): Promise<T> {
    const { result, changes } = await this.store.transaction(write);
    for (const change of changes) await this.caches.changed(change);
    return result;
  }

  private async changeBalance(kind: 'grant' | 'adjustment', { accountId, amountMicros, reason }: CreditChange) {
    const result = await this.store.appendLedgerEntry({ accountId, kind, amountMicros, reason });
    await this.caches.changed({ kind: 'balance', subjectId: accountId });
    return result;
  }
}
