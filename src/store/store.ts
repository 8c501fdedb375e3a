// The store as the app sees it, in domain words. One implementation (kysely-store.ts)
// serves SQLite and PostgreSQL.
import type { AutoRecharge, NewPayment, Payment, PaymentChanges, PaymentRef, PaymentStatus, StripeCustomer, StripeEventRecord } from './payment-records.js';
import type { RequestLogStore } from './request-log-store.js';
import type { AccountQuery, AdminStore } from './admin-store.js';
import type { ApiKeyRecord, KeyUpdate, NewApiKey } from './key-records.js';
import type { WebhookStore } from './webhook-store.js';
import type { UsageReport } from './report-records.js';
import type { Account, AccountRole, AccountStatus, SubscriptionStatus } from './account-records.js';
import type { OrgStore, SpendScope } from './org-store.js';
import type { AuthMethod, OidcIdentityStore } from './oidc-identities.js';
import type { AlertStore } from './alert-store.js';
import type { InvitationStore } from './invitation-store.js';
import type { UsageDataStore } from './usage-data-store.js';
import type { CappedCharge, TimeRange, UsageRecord, UsageSummary } from './usage-records.js';

/** What a change event is about: a key (revoked), an account (status, tier), or a balance. */
export type ChangeKind = 'key' | 'account' | 'balance';

export type LedgerKind = 'grant' | 'top_up' | 'subscription_credit' | 'usage' | 'refund' | 'adjustment';

/** One append-only change of a balance; the balance is the sum of an account's entries. */
export interface LedgerEntry {
  id: number;
  accountId: string;
  kind: LedgerKind;
  /** Positive adds credit, negative takes it. */
  amountMicros: number;
  reason: string | null;
  /** What caused it: a usage record id, a redemption code, a payment id. */
  reference: string | null;
  createdAt: string;
}

export interface NewLedgerEntry {
  accountId: string;
  kind: LedgerKind;
  amountMicros: number;
  reason?: string | null;
  reference?: string | null;
}

export interface VersionedBalance {
  balanceMicros: number;
  version: number;
}

/** What a write changed that others may hold a copy of: a key, an account, a balance. */
export interface Change {
  kind: ChangeKind;
  subjectId: string;
}

/** A change as the change feed holds it. */
export interface ChangeEvent extends Change {
  id: number;
}

/** A signed-in browser (dashboard); the cookie holds the token, the store only its hash. */
export interface Session {
  tokenHash: string;
  accountId: string;
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
  lastSeenAt: string;
  authMethod: AuthMethod; // how it was made (oidc-identities.ts)
  /** The organisation it acts for (org-store.ts); null: the person's own account. */
  orgId: string | null;
}

/** A one-time link's token, as stored: its hash, never the token. */
export interface NewAccountToken {
  tokenHash: string;
  accountId: string;
  purpose: 'password_reset';
  createdAt: string;
  expiresAt: string;
}

/** A sign-up waiting for the link mailed to its address (the token's hash, never the token). */
export interface PendingSignUp extends Omit<NewAccountToken, 'accountId' | 'purpose'>, Pick<NewSignUp, 'email' | 'name' | 'passwordHash'> {}

/** A code the operator issued; whoever redeems it first gets its credits. */
export interface RedemptionCode {
  id: string;
  /** The code's last characters, to tell codes apart (`LMG-…-7K3Q`); null for codes made before hints. */
  hint: string | null;
  amountMicros: number;
  expiresAt: string | null;
  createdAt: string;
  redeemedBy: string | null;
  redeemedAt: string | null;
  /** Withdrawn by an operator: it no longer redeems. */
  disabledAt: string | null;
}

export interface NewRedemptionCode {
  codeHash: string;
  hint: string;
  amountMicros: number;
  expiresAt: string | null;
}

export type RedeemOutcome =
  | { outcome: 'redeemed'; codeId: string; amountMicros: number; balanceMicros: number }
  | { outcome: 'unknown' | 'expired' | 'already_redeemed' };

/** What a subscription event says about an account's plan. */
export interface SubscriptionState {
  tier: string;
  status: SubscriptionStatus;
  periodEnd: string | null;
  graceUntil: string | null;
  cancelAtPeriodEnd: boolean;
  subscriptionId: string | null;
}

export interface NewSignUp {
  email: string;
  name: string | null;
  tier: string;
  passwordHash: string;
  /** Granted in the same transaction (a ledger entry of kind 'grant'); 0 for none. */
  creditsMicros: number;
}

export type { ApiKeyRecord, CreditPeriod, KeyControls, KeyCreditLimit, KeyUpdate, NewApiKey } from './key-records.js';
export type { AutoRecharge, NewPayment, Payment, PaymentChanges, PaymentKind, PaymentRef, PaymentStatus, StripeCustomer, StripeEventRecord } from './payment-records.js';
export type { UsageReport, UsageReportTotals, UsageTotals } from './report-records.js';
export type { CappedCharge, TimeRange, UsageRecord, UsageSummary } from './usage-records.js';
export type { Account, AccountKind, AccountRole, AccountStatus, SubscriptionStatus } from './account-records.js';
export type { AccountQuery, Actor, AdminKeyRecord, AdminScope, AuditAction, AuditEntry, AuditQuery, AuditState, NewAdminKey, NewAuditEntry } from './admin-store.js';

/** A page of accounts with their balances, and how many match the search in all. */
export type AccountPage = { accounts: (Account & { balanceMicros: number })[]; total: number };

export interface Store extends AdminStore, RequestLogStore, OidcIdentityStore, WebhookStore, OrgStore, AlertStore, InvitationStore, UsageDataStore {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` with a store whose every method runs in one transaction: committed when `fn`
   * resolves, rolled back when it throws. Inside, use only the store given to `fn`.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /**
   * `transaction(fn)`, with the changes it recorded in the change feed (each once): what
   * the caches must follow once it committed.
   */
  unitOfWork<T>(fn: (tx: Store) => Promise<T>): Promise<{ result: T; changes: Change[] }>;
  migrate(): Promise<string[]>;
  close(): Promise<void>;

  /** Throws EmailTakenError. */
  createAccount(input: { email: string; name?: string | null; tier: string }): Promise<Account>;
  /** By id, or by email when the reference contains an `@`. */
  findAccount(idOrEmail: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  /** Accounts whose tier is none of `tiers` (a tier removed from the config). */
  countAccountsOutsideTiers(tiers: readonly string[]): Promise<number>;
  setAccountStatus(accountId: string, status: AccountStatus): Promise<Account>;
  setAccountTier(accountId: string, tier: string, comp?: { until: string | null }): Promise<Account>;
  setAccountRole(accountId: string, role: AccountRole): Promise<Account>;
  /** Every price × ppm / 1,000,000 for the account, beside its tier's multiplier. */
  setAccountPriceMultiplier(accountId: string, ppm: number): Promise<Account>;
  /** Oldest first, `limit` from `offset`, with their balances and the count of all that match. */
  searchAccounts(query: AccountQuery): Promise<AccountPage>;

  /** An account with a password (and its sign-up credits), all or nothing. Throws EmailTakenError. */
  signUp(input: NewSignUp): Promise<Account>;
  findPasswordHash(accountId: string): Promise<string | undefined>;
  setPasswordHash(accountId: string, passwordHash: string): Promise<void>;

  createSession(session: Session): Promise<void>;
  findSession(tokenHash: string): Promise<Session | undefined>;
  touchSession(tokenHash: string, lastSeenAt: string): Promise<void>;
  deleteSession(tokenHash: string): Promise<void>;
  /** Signs the account out everywhere but the session kept. */
  deleteOtherSessions(accountId: string, keepTokenHash: string): Promise<void>;
  deleteExpiredSessions(nowIso: string): Promise<void>;

  createAccountToken(token: NewAccountToken): Promise<void>;
  /**
   * Uses a password-reset token once: sets the password and ends every session of the
   * account, all or nothing. Undefined (nothing changed) when the token is unknown, used or expired.
   */
  resetPassword(tokenHash: string, passwordHash: string, nowIso: string): Promise<string | undefined>;
  createPendingSignUp(pending: PendingSignUp): Promise<void>;
  /** Uses a sign-up's confirmation token once; undefined when unknown, used or expired. */
  takePendingSignUp(tokenHash: string, nowIso: string): Promise<Omit<PendingSignUp, 'tokenHash' | 'createdAt' | 'expiresAt'> | undefined>;

  createApiKey(input: NewApiKey): Promise<ApiKeyRecord>;
  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  findKeyById(keyId: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Idempotent; returns the key as stored afterwards. */
  revokeKey(keyId: string): Promise<ApiKeyRecord>;
  /**
   * Revokes the key only if it belongs to the account (idempotent); undefined when it does
   * not, so another account's key is indistinguishable from a missing one.
   */
  revokeAccountKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes the active key with this hash as leaked; undefined when there is none. */
  revokeLeakedKey(keyHash: string, leakUrl: string | null): Promise<ApiKeyRecord | undefined>;
  /**
   * Renames the key or changes its controls, recording a 'key' change; only among
   * `ownerId`'s keys when given. Undefined when there is no such key.
   */
  updateKey(keyId: string, ownerId: string | undefined, changes: KeyUpdate): Promise<ApiKeyRecord | undefined>;
  /** Batched "last used" stamps, written off the request path. */
  touchKeys(lastUsedAtById: ReadonlyMap<string, string>): Promise<void>;

  /**
   * Appends one entry and moves the cached balance in the same transaction, recording a
   * 'balance' change event. Throws BalanceWouldGoNegativeError instead of going below zero.
   */
  appendLedgerEntry(entry: NewLedgerEntry): Promise<{ entry: LedgerEntry; balanceMicros: number }>;
  /**
   * Writes usage records with their 'usage' ledger entries (one per record with a cost),
   * all in one transaction; a record already stored (same id) is skipped, so a retried
   * batch charges nothing twice. A charge never takes a balance below zero: it is capped
   * at what is left, and returned so the writer can report it. Records no change events
   * (the writing instance already knows).
   */
  recordUsage(records: readonly UsageRecord[]): Promise<CappedCharge[]>;
  /** This store will write usage: start what writes it now (SQLite's usage thread), not on the first batch. */
  prepareUsageWrites(): void;
  /** CPU seconds SQLite's usage write thread has used (on Linux); undefined elsewhere. */
  usageThreadCpuSeconds(): number | undefined;
  balanceOf(accountId: string): Promise<number>;
  /** The balance with its version, which every write of it raises (to order reads of it). */
  versionedBalanceOf(accountId: string): Promise<VersionedBalance>;
  /** The sum of an account's ledger entries (equal to its balance; checked by tests). */
  sumLedger(accountId: string): Promise<number>;
  /** Newest first. */
  listLedger(accountId: string, options?: { limit?: number; beforeId?: number }): Promise<LedgerEntry[]>;
  /** Newest first. */
  listUsage(accountId: string, options?: { limit?: number; sinceIso?: string; untilIso?: string; memberId?: string }): Promise<UsageRecord[]>;
  /**
   * What a scope (a key, a member of an organisation, an account) was charged from `sinceIso`
   * on (null: ever), summed in SQL, plus that of `unstored`: its records in that window settled
   * but perhaps not yet written (queued, or in the usage stream), counted unless the store has them.
   */
  spendOf(scope: SpendScope, sinceIso: string | null, unstored?: readonly Pick<UsageRecord, 'id' | 'costMicros' | 'shortfallMicros'>[]): Promise<number>;
  /** Sums per UTC day, per day and model, per day and key, grouped in SQL. */
  summarizeUsage(accountId: string, range: TimeRange, options?: { memberId?: string }): Promise<UsageSummary>;

  createRedemptionCodes(codes: readonly NewRedemptionCode[]): Promise<RedemptionCode[]>;
  /** Newest first. */
  listRedemptionCodes(): Promise<RedemptionCode[]>;
  /**
   * Marks the code redeemed by the account and credits it (a 'top_up' ledger entry whose
   * reference is the code id) in one transaction; a code credits exactly once, however
   * many redeem it at the same time.
   */
  redeemCode(accountId: string, codeHash: string, nowIso: string): Promise<RedeemOutcome>;

  /** False when the event was recorded before: the unique id decides, whatever instance races. */
  recordStripeEvent(event: StripeEventRecord): Promise<boolean>;
  findStripeEvent(id: string): Promise<StripeEventRecord | undefined>;
  /** Newest first. */
  listStripeEvents(options?: { limit?: number }): Promise<StripeEventRecord[]>;
  findStripeCustomer(accountId: string): Promise<StripeCustomer | undefined>;
  findStripeCustomerById(customerId: string): Promise<StripeCustomer | undefined>;
  /** Keeps the first customer an account gets. */
  saveStripeCustomer(accountId: string, customerId: string): Promise<StripeCustomer>;
  /**
   * Sets the account's tier and subscription from a Stripe state of time `atUnixSec`, unless
   * a newer one was applied already (then undefined). Records an account change event.
   */
  applySubscriptionState(accountId: string, state: SubscriptionState, atUnixSec: number): Promise<Account | undefined>;
  /**
   * Inside `transaction`: holds the account's row until the transaction ends, so writes
   * about one account (its payment events) take turns; NotFoundInStoreError if it is gone.
   */
  lockAccount(accountId: string): Promise<void>;

  createPayment(payment: NewPayment): Promise<Payment>;
  findPayment(ref: PaymentRef): Promise<Payment | undefined>;
  /** Changes the payment if its status is `fromStatus` (when given); undefined if not. */
  updatePayment(id: string, changes: PaymentChanges, fromStatus?: PaymentStatus): Promise<Payment | undefined>;
  /** Newest first; every account's when no account is named. */
  listPayments(options?: { accountId?: string; limit?: number }): Promise<Payment[]>;

  findAutoRecharge(accountId: string): Promise<AutoRecharge | undefined>;
  /** Saves the settings, armed and without a notice. */
  setAutoRecharge(accountId: string, settings: { thresholdMicros: number; amountMinor: number; enabled: boolean }): Promise<AutoRecharge>;
  /**
   * Disarms an enabled, armed auto-recharge and returns its new sequence number; undefined
   * when another caller (any instance) claimed this crossing first.
   */
  claimAutoRecharge(accountId: string): Promise<number | undefined>;
  rearmAutoRecharge(accountId: string): Promise<void>;
  disableAutoRecharge(accountId: string, notice: string): Promise<void>;

  /** Marks an unredeemed code disabled; undefined when there is no such code. */
  disableRedemptionCode(codeId: string): Promise<RedemptionCode | undefined>;
  findRedemptionCode(codeId: string): Promise<RedemptionCode | undefined>;

  /** Every account's usage in the range (or one account's), by day, model, account, key and status. */
  reportUsage(range: TimeRange, options?: { accountId?: string; top?: number }): Promise<UsageReport>;

  latestChangeId(): Promise<number>;
  changesAfter(id: number): Promise<ChangeEvent[]>;
  pruneChanges(olderThan: Date): Promise<void>;
}

// The store's refusals are errors of the family (errors.ts), so every surface renders them.
export { BalanceWouldGoNegativeError, EmailTakenError, NotFoundInStoreError } from '../errors.js';
