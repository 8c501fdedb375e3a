import { Migrator, sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import { checkMicros } from '../billing/money.js';
import { openPostgres } from './dialects/postgres.js';
import { openSqlite } from './dialects/sqlite.js';
import { SqliteUsageBulk } from './dialects/sqlite-usage-bulk.js';
import { planUsageCharges, toUsageRow } from './usage-rows.js';
import { newId } from './ids.js';
import { migrationProvider } from './migrations/index.js';
import {
  BalanceWouldGoNegativeError,
  EmailTakenError,
  NotFoundInStoreError,
  type Account,
  type AccountStatus,
  type ApiKeyRecord,
  type ChangeEvent,
  type ChangeKind,
  type LedgerEntry,
  type LedgerKind,
  type NewApiKey,
  type NewLedgerEntry,
  type NewRedemptionCode,
  type NewSignUp,
  type RedeemOutcome,
  type RedemptionCode,
  type Session,
  type Store,
  type SubscriptionStatus,
  type TimeRange,
  type UsageRecord,
  type UsageSummary,
  type UsageTotals,
  type VersionedBalance,
} from './store.js';
import type { AccountsTable, ApiKeysTable, Database, LedgerEntriesTable, RedemptionCodesTable, UsageRecordsTable } from './tables.js';

export interface StoreLocation {
  /** postgres://... when set; otherwise the SQLite file. */
  databaseUrl?: string;
  sqlitePath: string;
}

export function openStore(location: StoreLocation): Store {
  if (location.databaseUrl) return new KyselyStore(openPostgres(location.databaseUrl), 'postgres');
  const { db, sqlite } = openSqlite(location.sqlitePath);
  return new KyselyStore(db, 'sqlite', new SqliteUsageBulk(sqlite));
}

const now = (): string => new Date().toISOString();

export class KyselyStore implements Store {
  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: 'sqlite' | 'postgres',
    private readonly sqliteBulk?: SqliteUsageBulk,
  ) {}

  async migrate(): Promise<string[]> {
    const migrator = new Migrator({ db: this.db, provider: migrationProvider });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw new Error(`migration failed: ${(error as Error).message ?? error}`, { cause: error });
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  async createAccount(input: { email: string; name?: string | null; tier: string }): Promise<Account> {
    const row = newAccountRow(input, now());
    await this.db.insertInto('accounts').values(row).execute();
    return toAccount(row);
  }

  async findAccount(idOrEmail: string): Promise<Account | undefined> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where(idOrEmail.includes('@') ? 'email' : 'id', '=', idOrEmail.includes('@') ? idOrEmail.trim().toLowerCase() : idOrEmail)
      .executeTakeFirst();
    return row && toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(toAccount);
  }

  setAccountStatus(accountId: string, status: AccountStatus): Promise<Account> {
    return this.updateAccount(accountId, { status });
  }

  setAccountTier(accountId: string, tier: string): Promise<Account> {
    return this.updateAccount(accountId, { tier });
  }

  private async updateAccount(accountId: string, changes: Partial<AccountsTable>): Promise<Account> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable('accounts')
        .set({ ...changes, updated_at: now() })
        .where('id', '=', accountId)
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new NotFoundInStoreError('account', accountId);
      await recordChange(trx, this.dialect, 'account', accountId);
      return toAccount(row);
    });
  }

  async signUp(input: NewSignUp): Promise<Account> {
    const at = now();
    const row = newAccountRow(input, at);
    try {
      return await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('accounts').values(row).execute();
        await trx.insertInto('account_passwords').values({ account_id: row.id, password_hash: input.passwordHash, updated_at: at }).execute();
        if (input.creditsMicros > 0) {
          await appendLedgerEntryIn(trx, this.dialect, { accountId: row.id, kind: 'grant', amountMicros: input.creditsMicros, reason: 'sign-up credits' });
        }
        return toAccount(row);
      });
    } catch (err) {
      // The unique index decides, so two sign-ups racing for one email cannot both win.
      if (isUniqueViolation(err)) throw new EmailTakenError(row.email);
      throw err;
    }
  }

  async findPasswordHash(accountId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('account_passwords').select('password_hash').where('account_id', '=', accountId).executeTakeFirst();
    return row?.password_hash;
  }

  async setPasswordHash(accountId: string, passwordHash: string): Promise<void> {
    await this.db
      .insertInto('account_passwords')
      .values({ account_id: accountId, password_hash: passwordHash, updated_at: now() })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now() }))
      .execute();
  }

  async createSession(session: Session): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        token_hash: session.tokenHash,
        account_id: session.accountId,
        csrf_token: session.csrfToken,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
        last_seen_at: session.lastSeenAt,
      })
      .execute();
  }

  async findSession(tokenHash: string): Promise<Session | undefined> {
    const row = await this.db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return (
      row && {
        tokenHash: row.token_hash,
        accountId: row.account_id,
        csrfToken: row.csrf_token,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
        lastSeenAt: row.last_seen_at,
      }
    );
  }

  async touchSession(tokenHash: string, lastSeenAt: string): Promise<void> {
    await this.db.updateTable('sessions').set({ last_seen_at: lastSeenAt }).where('token_hash', '=', tokenHash).execute();
  }

  async deleteSession(tokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
  }

  async deleteOtherSessions(accountId: string, keepTokenHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('account_id', '=', accountId).where('token_hash', '!=', keepTokenHash).execute();
  }

  async deleteExpiredSessions(nowIso: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('expires_at', '<=', nowIso).execute();
  }

  async createApiKey(input: NewApiKey): Promise<ApiKeyRecord> {
    const row: ApiKeysTable = {
      id: newId('key'),
      account_id: input.accountId,
      name: input.name,
      key_hash: input.keyHash,
      prefix: input.prefix,
      last_four: input.lastFour,
      created_at: now(),
      last_used_at: null,
      revoked_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return toApiKey(row);
  }

  async findKeyByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row && toApiKey(row);
  }

  async findKeyById(keyId: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
    return row && toApiKey(row);
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toApiKey);
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
      const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
      if (!row) throw new NotFoundInStoreError('key', keyId);
      await recordChange(trx, this.dialect, 'key', keyId);
      return toApiKey(row);
    });
  }

  async revokeAccountKey(accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const revoked = await trx
        .updateTable('api_keys')
        .set({ revoked_at: now() })
        .where('id', '=', keyId)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
      if (!row) return undefined;
      // Only a key that changed needs other instances to forget it.
      if (revoked.numUpdatedRows > 0n) await recordChange(trx, this.dialect, 'key', keyId);
      return toApiKey(row);
    });
  }

  async touchKeys(lastUsedAtById: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsedAtById.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of lastUsedAtById) {
        await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
      }
    });
  }

  async appendLedgerEntry(input: NewLedgerEntry): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.db.transaction().execute((trx) => appendLedgerEntryIn(trx, this.dialect, input));
  }

  async recordUsage(records: readonly UsageRecord[]): Promise<void> {
    // A batch may repeat a record (a retried enqueue); the first copy wins, like the id
    // conflict with a stored one below.
    const byId = new Map<string, UsageRecord>();
    for (const record of records) {
      checkUsageRecord(record);
      if (!byId.has(record.id)) byId.set(record.id, record);
    }
    if (byId.size === 0) return;
    const unique = [...byId.values()];
    if (this.sqliteBulk) {
      // One usage record per request makes this the store's busiest write; on SQLite it
      // runs synchronously on the event loop, so it uses prepared statements (about 8×
      // cheaper than building multi-row inserts), under Kysely's connection lock.
      const bulk = this.sqliteBulk;
      await this.db.connection().execute(async () => bulk.recordUsage(unique, now()));
      return;
    }
    const accountIds = [...new Set(unique.map((r) => r.accountId))].sort();
    const at = now();

    await this.db.transaction().execute(async (trx) => {
      // Balances are locked before anything is written, so a concurrent writer (another
      // instance, the CLI) either sees this batch whole or waits for it.
      const balances = await lockBalances(trx, this.dialect, accountIds);

      // ON CONFLICT DO NOTHING ... RETURNING answers with the rows actually inserted: a
      // record already stored (a retried batch) is neither written nor charged. A
      // concurrent insert of the same id waits for the other transaction and is then
      // skipped, so checking for existing ids first would race.
      const inserted = new Set<string>();
      for (const chunk of chunked(unique, USAGE_ROWS_PER_INSERT)) {
        const rows = await trx
          .insertInto('usage_records')
          .values(chunk.map(toUsageRow))
          .onConflict((oc) => oc.column('id').doNothing())
          .returning('id')
          .execute();
        for (const row of rows) inserted.add(row.id);
      }

      const { entries, chargedByAccount } = planUsageCharges(unique.filter((r) => inserted.has(r.id)), balances, at);
      for (const chunk of chunked(entries, LEDGER_ROWS_PER_INSERT)) await trx.insertInto('ledger_entries').values(chunk).execute();
      for (const [accountId, chargedMicros] of chargedByAccount) {
        await trx
          .updateTable('accounts')
          .set((eb) => ({ balance_micros: eb('balance_micros', '-', chargedMicros), balance_version: eb('balance_version', '+', 1) }))
          .where('id', '=', accountId)
          .execute();
      }
    });
  }

  async versionedBalanceOf(accountId: string): Promise<VersionedBalance> {
    const row = await this.db.selectFrom('accounts').select(['balance_micros', 'balance_version']).where('id', '=', accountId).executeTakeFirst();
    if (!row) throw new NotFoundInStoreError('account', accountId);
    return { balanceMicros: checkMicros(Number(row.balance_micros)), version: Number(row.balance_version) };
  }

  async balanceOf(accountId: string): Promise<number> {
    const row = await this.db.selectFrom('accounts').select('balance_micros').where('id', '=', accountId).executeTakeFirst();
    if (!row) throw new NotFoundInStoreError('account', accountId);
    return checkMicros(Number(row.balance_micros));
  }

  async sumLedger(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('amount_micros'), sql.lit(0)).as('total'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    // PostgreSQL sums BIGINT into NUMERIC, which pg hands over as a string.
    return checkMicros(Number(row.total));
  }

  async listLedger(accountId: string, options: { limit?: number } = {}): Promise<LedgerEntry[]> {
    let query = this.db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc');
    if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
    return (await query.execute()).map(toLedgerEntry);
  }

  async listUsage(accountId: string, options: { limit?: number; sinceIso?: string; untilIso?: string } = {}): Promise<UsageRecord[]> {
    let query = this.db
      .selectFrom('usage_records')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    if (options.sinceIso !== undefined) query = query.where('created_at', '>=', options.sinceIso);
    if (options.untilIso !== undefined) query = query.where('created_at', '<', options.untilIso);
    if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
    return (await query.execute()).map(toUsageRecord);
  }

  async summarizeUsage(accountId: string, range: TimeRange): Promise<UsageSummary> {
    // created_at is ISO 8601 UTC text, so its first ten characters are the UTC day on both
    // databases, and the range is an index range scan on (account_id, created_at).
    const day = sql<string>`substr(created_at, 1, 10)`;
    const base = this.db
      .selectFrom('usage_records')
      .where('account_id', '=', accountId)
      .where('created_at', '>=', range.fromIso)
      .where('created_at', '<', range.untilIso)
      .select((eb) => [
        day.as('day'),
        eb.fn.countAll<number | string>().as('requests'),
        eb.fn.sum<number | string>('prompt_tokens').as('prompt_tokens'),
        eb.fn.sum<number | string>('completion_tokens').as('completion_tokens'),
        eb.fn.sum<number | string>('cost_micros').as('cost_micros'),
      ]);
    const [days, byModel, byKey] = await Promise.all([
      base.groupBy(day).orderBy(day).execute(),
      base.select('model').groupBy([day, 'model']).orderBy(day).orderBy('model').execute(),
      base.select('key_id').groupBy([day, 'key_id']).orderBy(day).orderBy('key_id').execute(),
    ]);
    return {
      days: days.map(toUsageTotals),
      byModel: byModel.map((row) => ({ ...toUsageTotals(row), model: row.model })),
      byKey: byKey.map((row) => ({ ...toUsageTotals(row), keyId: row.key_id })),
    };
  }

  async createRedemptionCodes(codes: readonly NewRedemptionCode[]): Promise<RedemptionCode[]> {
    const at = now();
    const rows: RedemptionCodesTable[] = codes.map((code) => ({
      id: newId('code'),
      code_hash: code.codeHash,
      amount_micros: checkMicros(code.amountMicros),
      expires_at: code.expiresAt,
      created_at: at,
      redeemed_by: null,
      redeemed_at: null,
    }));
    if (rows.length > 0) await this.db.insertInto('redemption_codes').values(rows).execute();
    return rows.map(toRedemptionCode);
  }

  async listRedemptionCodes(): Promise<RedemptionCode[]> {
    const rows = await this.db.selectFrom('redemption_codes').selectAll().orderBy('created_at', 'desc').orderBy('id').execute();
    return rows.map(toRedemptionCode);
  }

  async redeemCode(accountId: string, codeHash: string, nowIso: string): Promise<RedeemOutcome> {
    return this.db.transaction().execute(async (trx) => {
      // The conditional update is the claim: of concurrent redeemers, exactly one matches
      // `redeemed_at IS NULL` (PostgreSQL re-checks it after waiting on the row lock;
      // SQLite runs one writer at a time), and the others update nothing.
      const claimed = await trx
        .updateTable('redemption_codes')
        .set({ redeemed_by: accountId, redeemed_at: nowIso })
        .where('code_hash', '=', codeHash)
        .where('redeemed_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', nowIso)]))
        .returning(['id', 'amount_micros'])
        .executeTakeFirst();
      if (!claimed) {
        const code = await trx.selectFrom('redemption_codes').select(['expires_at', 'redeemed_at']).where('code_hash', '=', codeHash).executeTakeFirst();
        if (!code) return { outcome: 'unknown' };
        return { outcome: code.redeemed_at !== null ? 'already_redeemed' : 'expired' };
      }
      const amountMicros = checkMicros(Number(claimed.amount_micros));
      const { balanceMicros } = await appendLedgerEntryIn(trx, this.dialect, {
        accountId,
        kind: 'top_up',
        amountMicros,
        reason: 'redemption code',
        reference: claimed.id,
      });
      return { outcome: 'redeemed', codeId: claimed.id, amountMicros, balanceMicros };
    });
  }

  async latestChangeId(): Promise<number> {
    const row = await this.db
      .selectFrom('change_events')
      .select((eb) => eb.fn.max('id').as('max_id'))
      .executeTakeFirst();
    return Number(row?.max_id ?? 0);
  }

  async changesAfter(id: number): Promise<ChangeEvent[]> {
    const rows = await this.db
      .selectFrom('change_events')
      .select(['id', 'kind', 'subject_id'])
      .where('id', '>', id)
      .orderBy('id')
      .limit(1000)
      .execute();
    return rows.map((r) => ({ id: Number(r.id), kind: r.kind as ChangeKind, subjectId: r.subject_id }));
  }

  async pruneChanges(olderThan: Date): Promise<void> {
    await this.db.deleteFrom('change_events').where('created_at', '<', olderThan.toISOString()).execute();
  }
}

/**
 * One ledger entry and the balance it moves, inside the caller's transaction, with a
 * 'balance' change event. Throws BalanceWouldGoNegativeError instead of going below zero.
 */
async function appendLedgerEntryIn(
  trx: Transaction<Database>,
  dialect: Store['dialect'],
  input: NewLedgerEntry,
): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
  const row = toLedgerRow(input, now());
  const balances = await lockBalances(trx, dialect, [input.accountId]);
  const balanceMicros = balances.get(input.accountId)!;
  if (balanceMicros + row.amount_micros < 0) throw new BalanceWouldGoNegativeError(balanceMicros, row.amount_micros);
  const stored = await trx.insertInto('ledger_entries').values(row).returningAll().executeTakeFirstOrThrow();
  const updated = await trx
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb('balance_micros', '+', row.amount_micros), balance_version: eb('balance_version', '+', 1) }))
    .where('id', '=', input.accountId)
    .returning('balance_micros')
    .executeTakeFirstOrThrow();
  // Last, after the account row lock: recordChange's advisory lock is always the last
  // lock a transaction takes, so writers cannot wait on each other in a cycle.
  await recordChange(trx, dialect, 'balance', input.accountId);
  return { entry: toLedgerEntry(stored), balanceMicros: checkMicros(Number(updated.balance_micros)) };
}

/**
 * Appends to the change feed, which readers follow by "id greater than the last one seen".
 * On PostgreSQL a bigserial id is taken at insert but becomes visible only at commit, so
 * without care a reader can see id 6 (committed first) before id 5, move past 5 and never
 * deliver it: a revocation that never reaches other instances. The transaction-scoped lock
 * makes change writers take ids and commit one at a time, so ids become visible in order.
 * It is taken last in the transaction, so it cannot deadlock with row locks. SQLite already
 * serialises writers.
 */
async function recordChange(trx: Transaction<Database>, dialect: Store['dialect'], kind: ChangeKind, subjectId: string): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('lmgate.change_events'))`.execute(trx);
  await trx.insertInto('change_events').values({ kind, subject_id: subjectId, created_at: now() }).execute();
}

// Multi-row inserts stay far below the bound-parameter limits (SQLite 32766, PostgreSQL
// 65535): 13 columns × 200 rows, 6 × 500, and 1000 ids per IN list.
const USAGE_ROWS_PER_INSERT = 200;
const LEDGER_ROWS_PER_INSERT = 500;
const IDS_PER_LOCK = 1000;

/**
 * Locks the accounts' rows for the rest of the transaction and reads their balances;
 * throws NotFoundInStoreError if one does not exist. `accountIds` must be sorted.
 *
 * PostgreSQL: SELECT ... FOR UPDATE in id order, so two transactions that lock
 * overlapping sets take the locks in the same order and cannot deadlock; a concurrent
 * writer waits here and then reads the committed balance.
 * SQLite: one writer at a time already, but Kysely's BEGIN is deferred: a transaction that
 * reads first and writes later fails with SQLITE_BUSY_SNAPSHOT (busy_timeout does not
 * help) when another process (the CLI beside a server) commits in between. A write as the
 * first statement takes the write lock at once, waiting its turn, and the balances read
 * after it are current.
 */
async function lockBalances(trx: Transaction<Database>, dialect: Store['dialect'], accountIds: readonly string[]): Promise<Map<string, number>> {
  const balances = new Map<string, number>();
  for (const ids of chunked(accountIds, IDS_PER_LOCK)) {
    let rows: { id: string; balance_micros: number }[];
    if (dialect === 'postgres') {
      rows = await trx.selectFrom('accounts').select(['id', 'balance_micros']).where('id', 'in', ids).orderBy('id').forUpdate().execute();
    } else {
      await trx.updateTable('accounts').set((eb) => ({ balance_micros: eb.ref('balance_micros') })).where('id', 'in', ids).execute();
      rows = await trx.selectFrom('accounts').select(['id', 'balance_micros']).where('id', 'in', ids).execute();
    }
    for (const row of rows) balances.set(row.id, checkMicros(Number(row.balance_micros)));
  }
  const missing = accountIds.find((id) => !balances.has(id));
  if (missing !== undefined) throw new NotFoundInStoreError('account', missing);
  return balances;
}

function* chunked<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`not a row limit: ${limit}`);
  return limit;
}

const LEDGER_KINDS: Record<LedgerKind, true> = {
  grant: true,
  top_up: true,
  subscription_credit: true,
  usage: true,
  refund: true,
  adjustment: true,
};

function isLedgerKind(kind: string): kind is LedgerKind {
  return Object.hasOwn(LEDGER_KINDS, kind);
}

function toLedgerRow(input: NewLedgerEntry, at: string): Insertable<LedgerEntriesTable> {
  if (!isLedgerKind(input.kind)) throw new RangeError(`not a ledger kind: ${String(input.kind)}`);
  // The column widths, checked here so SQLite (which ignores them) fails like PostgreSQL.
  if ((input.reason?.length ?? 0) > 500) throw new RangeError('a ledger reason is at most 500 characters');
  if ((input.reference?.length ?? 0) > 200) throw new RangeError('a ledger reference is at most 200 characters');
  return {
    account_id: input.accountId,
    kind: input.kind,
    amount_micros: checkMicros(input.amountMicros),
    reason: input.reason ?? null,
    reference: input.reference ?? null,
    created_at: at,
  };
}

function toLedgerEntry(row: Selectable<LedgerEntriesTable>): LedgerEntry {
  if (!isLedgerKind(row.kind)) throw new RangeError(`ledger entry ${row.id} has an unknown kind ${JSON.stringify(row.kind)}`);
  return {
    id: Number(row.id),
    accountId: row.account_id,
    kind: row.kind,
    amountMicros: checkMicros(Number(row.amount_micros)),
    reason: row.reason,
    reference: row.reference,
    createdAt: row.created_at,
  };
}

function checkUsageRecord(record: UsageRecord): void {
  if (checkMicros(record.costMicros) < 0) throw new RangeError(`usage ${record.id} has a negative cost`);
  for (const [name, value] of [
    ['promptTokens', record.promptTokens],
    ['completionTokens', record.completionTokens],
    ['latencyMs', record.latencyMs],
    ['status', record.status],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`usage ${record.id}: ${name} is not a count: ${value}`);
  }
}


function toUsageRecord(row: Selectable<UsageRecordsTable>): UsageRecord {
  return {
    id: row.id,
    requestId: row.request_id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    costMicros: checkMicros(Number(row.cost_micros)),
    latencyMs: Number(row.latency_ms),
    status: Number(row.status),
    streamed: Number(row.streamed) === 1,
    finishReason: row.finish_reason,
    createdAt: row.created_at,
  };
}

function toUsageTotals(row: {
  day: string;
  requests: number | string;
  prompt_tokens: number | string | null;
  completion_tokens: number | string | null;
  cost_micros: number | string | null;
}): UsageTotals & { date: string } {
  // PostgreSQL sums into NUMERIC (a string from pg); counts are BIGINT.
  return {
    date: row.day,
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens ?? 0),
    completionTokens: Number(row.completion_tokens ?? 0),
    costMicros: checkMicros(Number(row.cost_micros ?? 0)),
  };
}

function toRedemptionCode(row: Selectable<RedemptionCodesTable>): RedemptionCode {
  return {
    id: row.id,
    amountMicros: checkMicros(Number(row.amount_micros)),
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    redeemedBy: row.redeemed_by,
    redeemedAt: row.redeemed_at,
  };
}

/** A unique index refused the row (better-sqlite3 and pg name it differently). */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    status: row.status as AccountStatus,
    tier: row.tier,
    subscriptionStatus: row.subscription_status as SubscriptionStatus,
    subscriptionPeriodEnd: row.subscription_period_end,
    createdAt: row.created_at,
  };
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    lastFour: row.last_four,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/** A new account as stored: active, no subscription, no credit until a ledger entry says so. */
function newAccountRow(input: { email: string; name?: string | null; tier: string }, at: string): AccountsTable {
  return {
    id: newId('acct'),
    email: input.email.trim().toLowerCase(),
    name: input.name ?? null,
    status: 'active',
    tier: input.tier,
    subscription_status: 'inactive',
    subscription_period_end: null,
    created_at: at,
    updated_at: at,
    balance_micros: 0,
    balance_version: 0,
  };
}
