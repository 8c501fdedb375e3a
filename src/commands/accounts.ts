// Accounts: an operator's, a customer's own sign-up (at once, or once the mailed link is
// opened), passwords and their reset links, status, tier, price multiplier and role.
import { CONFIRM_LINK_TTL_MS, hashAccountToken, newLinkToken, newResetToken } from '../auth/account-links.js';
import type { Account, AccountRole, AccountStatus, Actor, NewAuditEntry, NewSignUp, Store } from '../store/store.js';
import { audit, CommandSet } from './unit-of-work.js';

export interface NewAccount {
  email: string;
  name: string | null;
  tier: string;
  /** Granted with the account, as a 'grant' ledger entry; 0 for none. */
  creditsMicros: number;
  creditsReason: string;
}

export class AccountCommands extends CommandSet {
  /** An operator's account, with its first credits, all or nothing. Throws EmailTakenError. */
  async create(input: NewAccount, actor?: Actor): Promise<{ account: Account; balanceMicros: number }> {
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
  /**
   * The account's tier. With `comp` it is complimentary: allowed without the subscription
   * the tier needs, until `comp.until` (null: until the tier changes again); without it, an
   * earlier comp ends. The audit row records the comp with the tier.
   */
  async setTier(accountId: string, tier: string, actor?: Actor, comp?: { until: string | null }): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_tier', (tx) => tx.setAccountTier(accountId, tier, comp), tierFields);
  }
  /** A discount or a markup for one account, in parts per million (1,000,000: the prices as configured). */
  async setPriceMultiplier(accountId: string, ppm: number, actor: Actor): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_price_multiplier', (tx) => tx.setAccountPriceMultiplier(accountId, ppm), (a) => ({ price_multiplier_ppm: String(a.priceMultiplierPpm) }));
  }
  /** Operators may use the admin API and console with their dashboard session. */
  async setRole(accountId: string, role: AccountRole, actor: Actor): Promise<Account> {
    return this.changeAccount(accountId, actor, 'account.set_role', (tx) => tx.setAccountRole(accountId, role), (a) => ({ role: a.role }));
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

/** What a tier change's audit row shows: the tier, and its comp when there is one. */
function tierFields(account: Account): Record<string, string> {
  if (account.comp?.tier !== account.tier) return { tier: account.tier };
  return { tier: account.tier, comp_until: account.comp.until ?? 'none' };
}
