// The domain's write operations. The dashboard, the CLI, the admin API and payment
// webhooks change accounts, keys and credits only through these. Each is one store
// transaction that writes the change and its change event (so every instance follows),
// then brings this process's caches up to date at once. An admin action names its `actor`:
// its audit row is written in the same transaction, so no change goes unrecorded.
import { generateAdminKey } from '../auth/admin-key.js';
import { generateApiKey } from '../auth/api-key.js';
import { canonicalRedemptionCode, generateRedemptionCode, hashRedemptionCode, redemptionCodeHint } from '../billing/redemption-code.js';
import { NO_LOCAL_CACHES, type LocalCaches } from '../cluster/local-caches.js';
import { CONFIRM_LINK_TTL_MS, hashAccountToken, newLinkToken, newResetToken } from '../auth/account-links.js';
import { Refusal } from '../errors.js';
import type {
  Account,
  AccountRole,
  AccountStatus,
  Actor,
  AdminKeyRecord,
  AdminScope,
  ApiKeyRecord,
  AuditState,
  KeyControls,
  KeyUpdate,
  LedgerEntry,
  NewAuditEntry,
  NewSignUp,
  RedeemOutcome,
  RedemptionCode,
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

export interface NewCodes {
  amountMicros: number;
  count: number;
  expiresAt: string | null;
}

export interface CreatedAdminKey {
  record: AdminKeyRecord;
  /** Shown once, like a customer key's. */
  secret: string;
}

export class Commands {
  constructor(
    private readonly store: Store,
    private readonly caches: LocalCaches = NO_LOCAL_CACHES,
  ) {}

  /** An operator's account, with its first credits, all or nothing. Throws EmailTakenError. */
  async createAccount(input: NewAccount, actor?: Actor): Promise<{ account: Account; balanceMicros: number }> {
    return this.store.transaction(async (tx) => {
      const account = await tx.createAccount(input);
      const balanceMicros =
        input.creditsMicros === 0
          ? 0
          : (await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: input.creditsMicros, reason: input.creditsReason })).balanceMicros;
      await audit(tx, actor, {
        action: 'account.create',
        target: { kind: 'account', id: account.id },
        before: null,
        after: { email: account.email, tier: account.tier, status: account.status, balance_micros: balanceMicros },
      });
      return { account, balanceMicros };
    });
  }

  /** A customer's own sign-up: account, password and sign-up credits at once. Throws EmailTakenError. */
  signUp(input: NewSignUp): Promise<Account> {
    return this.store.signUp(input);
  }

  setPassword(accountId: string, passwordHash: string, actor?: Actor): Promise<void> {
    return this.store.transaction(async (tx) => {
      await tx.setPasswordHash(accountId, passwordHash);
      await audit(tx, actor, { action: 'account.set_password', target: { kind: 'account', id: accountId }, before: null, after: null });
    });
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

  async setStatus(accountId: string, status: AccountStatus, actor?: Actor): Promise<Account> {
    const action = status === 'suspended' ? 'account.suspend' : 'account.reactivate';
    return this.changeAccount(accountId, actor, action, (tx) => tx.setAccountStatus(accountId, status), (a) => ({ status: a.status }));
  }

  async setTier(accountId: string, tier: string, actor?: Actor): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_tier', (tx) => tx.setAccountTier(accountId, tier), (a) => ({ tier: a.tier }));
  }

  /** A discount or a markup for one account, in parts per million (1,000,000: the prices as configured). */
  async setPriceMultiplier(accountId: string, ppm: number, actor: Actor): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_price_multiplier', (tx) => tx.setAccountPriceMultiplier(accountId, ppm), (a) => ({ price_multiplier_ppm: String(a.priceMultiplierPpm) }));
  }

  /** Operators may use the admin API and console with their dashboard session. */
  async setRole(accountId: string, role: AccountRole, actor: Actor): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_role', (tx) => tx.setAccountRole(accountId, role), (a) => ({ role: a.role }));
  }

  grantCredits(change: CreditChange, actor?: Actor): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('grant', change, actor);
  }

  /** Throws BalanceWouldGoNegativeError rather than take the balance below zero. */
  adjustCredits(change: CreditChange, actor?: Actor): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('adjustment', change, actor);
  }

  /** Redemption codes; the codes themselves exist only in the result (the store keeps hashes). */
  async createCodes(input: NewCodes, actor: Actor): Promise<{ code: string; record: RedemptionCode }[]> {
    const codes = Array.from({ length: input.count }, generateRedemptionCode);
    return this.store.transaction(async (tx) => {
      const records = await tx.createRedemptionCodes(
        codes.map((code) => ({ codeHash: hashRedemptionCode(code), hint: redemptionCodeHint(code), amountMicros: input.amountMicros, expiresAt: input.expiresAt })),
      );
      await audit(tx, actor, {
        action: 'codes.create',
        target: { kind: 'code', id: records[0]?.id ?? '' },
        before: null,
        after: { code_ids: records.map((r) => r.id), amount_micros: input.amountMicros, count: input.count, expires_at: input.expiresAt },
      });
      return records.map((record, i) => ({ code: codes[i]!, record }));
    });
  }

  /** Refuses an unknown code (code_unknown) and a redeemed one (code_redeemed); a disabled one stays as it is. */
  async disableCode(codeId: string, actor: Actor): Promise<RedemptionCode> {
    return this.store.transaction(async (tx) => {
      const before = await tx.findRedemptionCode(codeId);
      if (!before) throw new Refusal('code_unknown');
      if (before.redeemedAt !== null) throw new Refusal('code_redeemed');
      if (before.disabledAt !== null) return before;
      const after = (await tx.disableRedemptionCode(codeId))!;
      await audit(tx, actor, {
        action: 'code.disable',
        target: { kind: 'code', id: codeId },
        before: { disabled_at: before.disabledAt, redeemed_at: before.redeemedAt },
        after: { disabled_at: after.disabledAt, redeemed_at: after.redeemedAt },
      });
      return after;
    });
  }

  async createAdminKey(name: string, scopes: AdminScope[], actor: Actor): Promise<CreatedAdminKey> {
    const key = generateAdminKey();
    return this.store.transaction(async (tx) => {
      const record = await tx.createAdminKey({ name, scopes, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
      await audit(tx, actor, { action: 'admin_key.create', target: { kind: 'admin_key', id: record.id }, before: null, after: { name, scopes } });
      return { record, secret: key.secret };
    });
  }

  /** Admin keys are read from the store on every use: a revocation holds on every instance at once. */
  async revokeAdminKey(keyId: string, actor: Actor): Promise<AdminKeyRecord> {
    return this.store.transaction(async (tx) => {
      const before = await tx.findAdminKeyById(keyId);
      const after = before && (await tx.revokeAdminKey(keyId));
      if (!before || !after) throw new Refusal('key_not_found');
      await audit(tx, actor, { action: 'admin_key.revoke', target: { kind: 'admin_key', id: keyId }, before: { revoked_at: before.revokedAt }, after: { revoked_at: after.revokedAt } });
      return after;
    });
  }

  /** A code typed by a customer; anything but a first redemption of a live code is refused. */
  async redeemCode(accountId: string, typed: string): Promise<Extract<RedeemOutcome, { outcome: 'redeemed' }>> {
    const canonical = canonicalRedemptionCode(typed);
    const result = canonical ? await this.commit((tx) => tx.redeemCode(accountId, hashRedemptionCode(canonical), new Date().toISOString())) : undefined;
    if (result?.outcome === 'redeemed') return result;
    if (result?.outcome === 'expired') throw new Refusal('code_expired');
    if (result?.outcome === 'already_redeemed') throw new Refusal('code_redeemed');
    throw new Refusal('code_unknown');
  }

  async createKey(accountId: string, name: string, controls?: KeyControls, actor?: Actor): Promise<CreatedKey> {
    const key = generateApiKey();
    return this.store.transaction(async (tx) => {
      const record = await tx.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour, controls });
      await audit(tx, actor, { action: 'key.create', target: { kind: 'key', id: record.id }, before: null, after: { account_id: accountId, name } });
      return { record, secret: key.secret };
    });
  }

  /** Renames a key or changes its controls, everywhere at once; only among `ownerId`'s keys when given. */
  async updateKey(keyId: string, changes: KeyUpdate, ownerId?: string, actor?: Actor): Promise<ApiKeyRecord> {
    const key = await this.store.transaction(async (tx) => {
      const before = actor && (await tx.findKeyById(keyId));
      const after = await tx.updateKey(keyId, ownerId, changes);
      if (!after) throw new Refusal('key_not_found');
      if (before) await audit(tx, actor, { action: 'key.update', target: { kind: 'key', id: keyId }, before: keyState(before), after: keyState(after) });
      return after;
    });
    this.caches.keyChanged(key);
    return key;
  }

  /** Revokes a key by id (the operator), or only among `accountId`'s keys (its owner). */
  async revokeKey(keyId: string, ownerId?: string, actor?: Actor): Promise<ApiKeyRecord> {
    const key = await this.store.transaction(async (tx) => {
      const before = await tx.findKeyById(keyId);
      const after = ownerId === undefined ? before && (await tx.revokeKey(keyId)) : await tx.revokeAccountKey(ownerId, keyId);
      if (!before || !after) throw new Refusal('key_not_found');
      await audit(tx, actor, {
        action: 'key.revoke',
        target: { kind: 'key', id: keyId },
        before: { account_id: before.accountId, revoked_at: before.revokedAt },
        after: { account_id: after.accountId, revoked_at: after.revokedAt },
      });
      return after;
    });
    this.caches.keyRevoked(key);
    return key;
  }

  /** A key found in public: revoked everywhere at once. Undefined when no active key has this hash. */
  async revokeLeakedKey(keyHash: string, leakUrl: string | null): Promise<ApiKeyRecord | undefined> {
    const key = await this.store.revokeLeakedKey(keyHash, leakUrl);
    if (key) this.caches.keyRevoked(key);
    return key;
  }

  /** A payment provider's event: `write` records it and its effects in one unit of work. */
  applyPayment<T>(write: (tx: Store) => Promise<T>): Promise<T> {
    return this.commit(write);
  }

  /**
   * One unit of work: `write` in one transaction; once it committed, every change it
   * recorded is applied to this process's caches and announced to the other instances.
   */
  private async commit<T>(write: (tx: Store) => Promise<T>): Promise<T> {
    const { result, changes } = await this.store.unitOfWork(write);
    for (const change of changes) await this.caches.changed(change);
    return result;
  }

  private changeBalance(kind: 'grant' | 'adjustment', { accountId, amountMicros, reason }: CreditChange, actor: Actor | undefined) {
    return this.commit(async (tx) => {
      const written = await tx.appendLedgerEntry({ accountId, kind, amountMicros, reason });
      await audit(tx, actor, {
        action: kind === 'grant' ? 'credits.grant' : 'credits.adjust',
        target: { kind: 'account', id: accountId },
        before: { balance_micros: written.balanceMicros - amountMicros },
        after: { balance_micros: written.balanceMicros, amount_micros: amountMicros, reason, ledger_entry_id: written.entry.id },
      });
      return written;
    });
  }

  /** One change of an account's row, audited with the field it changed before and after. */
  private async changeAccount(
    accountId: string,
    actor: Actor | undefined,
    action: NewAuditEntry['action'],
    write: (tx: Store) => Promise<Account>,
    field: (account: Account) => Record<string, string>,
  ): Promise<Account> {
    return this.commit(async (tx) => {
      const before = actor && (await tx.findAccount(accountId));
      const after = await write(tx);
      if (before) await audit(tx, actor, { action, target: { kind: 'account', id: accountId }, before: field(before), after: field(after) });
      return after;
    });
  }
}

/** What the audit log keeps of a key's name and controls. */
function keyState(key: ApiKeyRecord): AuditState {
  const { expiresAt, allowedModels, allowedIps, rpm, creditLimit } = key.controls;
  return {
    name: key.name,
    expires_at: expiresAt,
    allowed_models: allowedModels,
    allowed_ips: allowedIps,
    rpm,
    credit_limit_micros: creditLimit?.amountMicros ?? null,
    credit_limit_period: creditLimit?.period ?? null,
  };
}

/** The audit row of an admin action, in its transaction; a customer's own action (no actor) has none. */
async function audit(tx: Store, actor: Actor | undefined, entry: Omit<NewAuditEntry, 'actor'>): Promise<void> {
  if (actor) await tx.appendAudit({ actor, ...entry });
}
