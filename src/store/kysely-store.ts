// The one implementation of the Store port, for SQLite and PostgreSQL: a thin class over
// the domain modules (accounts, keys, sessions, ledger, usage, codes, payments, audit,
// admin keys, changes), each of which runs on the database or on a transaction. Writes
// that change several rows run in a transaction of their own, or in the caller's
// (`transaction(fn)`).
import { Migrator } from 'kysely';
import * as accounts from './accounts.js';
import * as accountTokens from './account-tokens.js';
import * as adminKeys from './admin-keys.js';
import * as audit from './audit.js';
import * as changes from './changes.js';
import * as codes from './codes.js';
import { openPostgres } from './dialects/postgres.js';
import { openSqlite } from './dialects/sqlite.js';
import * as keys from './keys.js';
import * as ledger from './ledger.js';
import { migrationProvider } from './migrations/index.js';
import { KyselyUsageDataStore } from './kysely-usage-data-store.js';
import { monthOf } from './partitions.js';
import { pruneRows } from './usage-retention.js';
import type { SpendScope } from './org-store.js';
import * as requestLog from './request-log.js';
import type { RefusedRequest, RequestLogEntry, RequestLogQuery } from './request-log-store.js';
import * as sessions from './sessions.js';
import * as oidcIdentities from './oidc-identities.js';
import type {
  Account,
  AccountPage,
  AccountQuery,
  AccountRole,
  AdminKeyRecord,
  AuditEntry,
  AuditQuery,
  NewAdminKey,
  NewAuditEntry,
  UsageReport,
  CappedCharge,
  AccountStatus,
  ApiKeyRecord,
  Change,
  ChangeEvent,
  LedgerEntry,
  NewAccountToken,
  PendingSignUp,
  NewApiKey,
  KeyUpdate,
  NewLedgerEntry,
  NewRedemptionCode,
  NewSignUp,
  RedeemOutcome,
  RedemptionCode,
  Session,
  Store,
  TimeRange,
  UsageRecord,
  UsageSummary,
  VersionedBalance,
} from './store.js';
import * as usage from './usage.js';
import { reportUsage } from './usage-report.js';

export interface StoreLocation {
  /** postgres://... when set; otherwise the SQLite file. */
  databaseUrl?: string;
  sqlitePath: string;
}

export function openStore(location: StoreLocation): Store {
  const { db, dialect } = location.databaseUrl ? openPostgres(location.databaseUrl) : openSqlite(location.sqlitePath);
  return new KyselyStore(db, dialect, false);
}

export class KyselyStore extends KyselyUsageDataStore implements Store {
  get dialect(): 'sqlite' | 'postgres' {
    return this.sqlDialect.name;
  }

  /**
   * Runs `fn` with a store whose every method runs in one transaction: committed when `fn`
   * resolves, rolled back when it throws. Inside, use only that store (on SQLite the
   * transaction holds the one connection). Nested calls join the outer transaction.
   */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    return this.sqlDialect.transaction(this.db, (trx) => fn(new KyselyStore(trx, this.sqlDialect, true)));
  }

  unitOfWork<T>(fn: (tx: Store) => Promise<T>): Promise<{ result: T; changes: Change[] }> {
    return this.transaction(async (tx) => {
      const kept = changes.keepChanges((tx as KyselyStore).db);
      const result = await fn(tx);
      return { result, changes: [...kept] };
    });
  }

  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw new Error(`migration failed: ${(error as Error).message ?? error}`, { cause: error });
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  async close(): Promise<void> {
    await this.sqlDialect.close();
    await this.db.destroy();
  }

  createAccount(input: accounts.NewAccount): Promise<Account> {
    return accounts.createAccount(this.db, input);
  }

  findAccount(idOrEmail: string): Promise<Account | undefined> {
    return accounts.findAccount(this.db, idOrEmail);
  }

  listAccounts(): Promise<Account[]> {
    return accounts.listAccounts(this.db);
  }

  countAccountsOutsideTiers(tiers: readonly string[]): Promise<number> {
    return accounts.countAccountsOutsideTiers(this.db, tiers);
  }

  setAccountStatus(accountId: string, status: AccountStatus): Promise<Account> {
    return this.write((trx) => accounts.updateAccount(trx, this.sqlDialect, accountId, { status }));
  }

  /** A tier, complimentary (without the subscription it needs) when `comp` says so; any earlier comp ends. */
  setAccountTier(accountId: string, tier: string, comp?: { until: string | null }): Promise<Account> {
    const compColumns = { comp_tier: comp ? tier : null, comp_until: comp?.until ?? null };
    return this.write((trx) => accounts.updateAccount(trx, this.sqlDialect, accountId, { tier, ...compColumns }));
  }

  setAccountRole(accountId: string, role: AccountRole): Promise<Account> {
    return this.write((trx) => accounts.updateAccount(trx, this.sqlDialect, accountId, { role }));
  }

  setAccountPriceMultiplier(accountId: string, ppm: number): Promise<Account> {
    return this.write((trx) => accounts.updateAccount(trx, this.sqlDialect, accountId, { price_multiplier_ppm: ppm }));
  }

  searchAccounts(query: AccountQuery): Promise<AccountPage> {
    return accounts.searchAccounts(this.db, query);
  }

  signUp(input: NewSignUp): Promise<Account> {
    return this.write((trx) => accounts.signUp(trx, this.sqlDialect, input));
  }

  findPasswordHash(accountId: string): Promise<string | undefined> {
    return accounts.findPasswordHash(this.db, accountId);
  }

  setPasswordHash(accountId: string, passwordHash: string): Promise<void> {
    return accounts.setPasswordHash(this.db, accountId, passwordHash);
  }

  createSession(session: Session): Promise<void> {
    return sessions.createSession(this.db, session);
  }

  findSession(tokenHash: string): Promise<Session | undefined> {
    return sessions.findSession(this.db, tokenHash);
  }

  touchSession(tokenHash: string, lastSeenAt: string): Promise<void> {
    return sessions.touchSession(this.db, tokenHash, lastSeenAt);
  }

  deleteSession(tokenHash: string): Promise<void> {
    return sessions.deleteSession(this.db, tokenHash);
  }

  deleteOtherSessions(accountId: string, keepTokenHash: string): Promise<void> {
    return sessions.deleteOtherSessions(this.db, accountId, keepTokenHash);
  }

  deleteExpiredSessions(nowIso: string): Promise<void> {
    return sessions.deleteExpiredSessions(this.db, nowIso);
  }

  findOidcIdentity(issuer: string, subject: string): Promise<oidcIdentities.OidcIdentity | undefined> {
    return oidcIdentities.findOidcIdentity(this.db, issuer, subject);
  }

  findOidcIdentityOfAccount(issuer: string, accountId: string): Promise<oidcIdentities.OidcIdentity | undefined> {
    return oidcIdentities.findOidcIdentityOfAccount(this.db, issuer, accountId);
  }

  linkOidcIdentity(identity: oidcIdentities.NewOidcIdentity, nowIso: string): Promise<void> {
    return oidcIdentities.linkOidcIdentity(this.db, identity, nowIso);
  }

  recordOidcSignIn(issuer: string, subject: string, email: string, nowIso: string): Promise<void> {
    return oidcIdentities.recordOidcSignIn(this.db, issuer, subject, email, nowIso);
  }

  createAccountToken(token: NewAccountToken): Promise<void> {
    return accountTokens.createAccountToken(this.db, token);
  }

  resetPassword(tokenHash: string, passwordHash: string, nowIso: string): Promise<string | undefined> {
    return this.write((trx) => accountTokens.resetPassword(trx, tokenHash, passwordHash, nowIso));
  }

  createPendingSignUp(pending: PendingSignUp): Promise<void> {
    return accountTokens.createPendingSignUp(this.db, pending);
  }

  takePendingSignUp(tokenHash: string, nowIso: string): Promise<{ email: string; name: string | null; passwordHash: string } | undefined> {
    return accountTokens.takePendingSignUp(this.db, tokenHash, nowIso);
  }

  createApiKey(input: NewApiKey): Promise<ApiKeyRecord> {
    return keys.createApiKey(this.db, input);
  }

  findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return keys.findKeyByHash(this.db, keyHash);
  }

  findKeyById(keyId: string): Promise<ApiKeyRecord | undefined> {
    return keys.findKeyById(this.db, keyId);
  }

  listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return keys.listKeys(this.db, accountId);
  }

  revokeKey(keyId: string): Promise<ApiKeyRecord> {
    return this.write((trx) => keys.revokeKey(trx, this.sqlDialect, keyId));
  }

  revokeAccountKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.write((trx) => keys.revokeAccountKey(trx, this.sqlDialect, accountId, keyId));
  }

  revokeLeakedKey(keyHash: string, leakUrl: string | null): Promise<ApiKeyRecord | undefined> {
    return this.write((trx) => keys.revokeLeakedKey(trx, this.sqlDialect, keyHash, leakUrl));
  }

  updateKey(keyId: string, ownerId: string | undefined, changes: KeyUpdate): Promise<ApiKeyRecord | undefined> {
    return this.write((trx) => keys.updateKey(trx, this.sqlDialect, keyId, ownerId, changes));
  }

  async touchKeys(lastUsedAtById: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsedAtById.size === 0) return;
    await this.write((trx) => keys.touchKeys(trx, lastUsedAtById));
  }

  appendLedgerEntry(input: NewLedgerEntry): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.write((trx) => ledger.appendLedgerEntry(trx, this.sqlDialect, input));
  }

  prepareUsageWrites(): void {
    this.sqlDialect.prepareUsageWrites();
  }

  usageThreadCpuSeconds(): number | undefined {
    return this.sqlDialect.usageThreadCpuSeconds();
  }

  recordUsage(records: readonly UsageRecord[]): Promise<CappedCharge[]> {
    return usage.recordUsage(this.db, this.sqlDialect, records, this.inTransaction);
  }

  versionedBalanceOf(accountId: string): Promise<VersionedBalance> {
    return ledger.versionedBalanceOf(this.db, accountId);
  }

  balanceOf(accountId: string): Promise<number> {
    return ledger.balanceOf(this.db, accountId);
  }

  sumLedger(accountId: string): Promise<number> {
    return ledger.sumLedger(this.db, accountId);
  }

  listLedger(accountId: string, options?: { limit?: number; beforeId?: number }): Promise<LedgerEntry[]> {
    return ledger.listLedger(this.db, accountId, options);
  }

  listUsage(accountId: string, options?: { limit?: number; sinceIso?: string; untilIso?: string; memberId?: string }): Promise<UsageRecord[]> {
    return usage.listUsage(this.db, accountId, options);
  }

  async recordRefusals(refusals: readonly RefusedRequest[]): Promise<void> {
    if (refusals.length === 0) return;
    await this.sqlDialect.ensurePartitions('refused_requests', new Set(refusals.map((r) => monthOf(r.createdAt))));
    await this.write((trx) => requestLog.recordRefusals(trx, refusals));
  }

  listRequestLog(accountId: string, query: RequestLogQuery): Promise<RequestLogEntry[]> {
    return requestLog.listRequestLog(this.db, accountId, query);
  }

  async pruneRefusals(beforeIso: string): Promise<number> {
    return (await pruneRows(this.db, this.sqlDialect, 'refused_requests', beforeIso)).rowsDeleted;
  }

  spendOf(scope: SpendScope, sinceIso: string | null, unstored: readonly Pick<UsageRecord, 'id' | 'costMicros' | 'shortfallMicros'>[] = []): Promise<number> {
    return usage.spendOf(this.db, scope, sinceIso, unstored);
  }

  summarizeUsage(accountId: string, range: TimeRange, options?: { memberId?: string }): Promise<UsageSummary> {
    return usage.summarizeUsage(this.db, accountId, range, options);
  }

  createRedemptionCodes(newCodes: readonly NewRedemptionCode[]): Promise<RedemptionCode[]> {
    return codes.createRedemptionCodes(this.db, newCodes);
  }

  listRedemptionCodes(): Promise<RedemptionCode[]> {
    return codes.listRedemptionCodes(this.db);
  }

  redeemCode(accountId: string, codeHash: string, nowIso: string): Promise<RedeemOutcome> {
    return this.write((trx) => codes.redeemCode(trx, this.sqlDialect, accountId, codeHash, nowIso));
  }

  disableRedemptionCode(codeId: string): Promise<RedemptionCode | undefined> {
    return codes.disableRedemptionCode(this.db, codeId);
  }

  findRedemptionCode(codeId: string): Promise<RedemptionCode | undefined> {
    return codes.findRedemptionCode(this.db, codeId);
  }

  appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    return audit.appendAudit(this.db, entry);
  }

  listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    return audit.listAudit(this.db, query);
  }

  createAdminKey(input: NewAdminKey): Promise<AdminKeyRecord> {
    return adminKeys.createAdminKey(this.db, input);
  }

  findAdminKeyByHash(keyHash: string): Promise<AdminKeyRecord | undefined> {
    return adminKeys.findAdminKeyByHash(this.db, keyHash);
  }

  findAdminKeyById(keyId: string): Promise<AdminKeyRecord | undefined> {
    return adminKeys.findAdminKeyById(this.db, keyId);
  }

  listAdminKeys(): Promise<AdminKeyRecord[]> {
    return adminKeys.listAdminKeys(this.db);
  }

  revokeAdminKey(keyId: string): Promise<AdminKeyRecord | undefined> {
    return adminKeys.revokeAdminKey(this.db, keyId);
  }

  touchAdminKey(keyId: string, lastUsedAt: string): Promise<void> {
    return adminKeys.touchAdminKey(this.db, keyId, lastUsedAt);
  }

  reportUsage(range: TimeRange, options?: { accountId?: string; top?: number }): Promise<UsageReport> {
    return reportUsage(this.db, this.sqlDialect, range, options);
  }

  latestChangeId(): Promise<number> {
    return changes.latestChangeId(this.db);
  }

  changesAfter(id: number): Promise<ChangeEvent[]> {
    return changes.changesAfter(this.db, id);
  }

  pruneChanges(olderThan: Date): Promise<void> {
    return changes.pruneChanges(this.db, olderThan);
  }
}
