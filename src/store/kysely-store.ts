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
  type Store,
  type SubscriptionStatus,
  type UsageRecord,
} from './store.js';
import type { AccountsTable, ApiKeysTable, Database, LedgerEntriesTable, UsageRecordsTable } from './tables.js';

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
    const at = now();
    const row: AccountsTable = {
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
    };
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

  async touchKeys(lastUsedAtById: ReadonlyMap<string, string>): Promise<void> {
    if (lastUsedAtById.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of lastUsedAtById) {
        await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
      }
    });
  }

  async appendLedgerEntry(input: NewLedgerEntry): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    const row = toLedgerRow(input, now());
    return this.db.transaction().execute(async (trx) => {
      const balances = await lockBalances(trx, this.dialect, [input.accountId]);
      const balanceMicros = balances.get(input.accountId)!;
      if (balanceMicros + row.amount_micros < 0) throw new BalanceWouldGoNegativeError(balanceMicros, row.amount_micros);
      const stored = await trx.insertInto('ledger_entries').values(row).returningAll().executeTakeFirstOrThrow();
      const updated = await trx
        .updateTable('accounts')
        .set((eb) => ({ balance_micros: eb('balance_micros', '+', row.amount_micros) }))
        .where('id', '=', input.accountId)
        .returning('balance_micros')
        .executeTakeFirstOrThrow();
      // Last, after the account row lock: recordChange's advisory lock is always the last
      // lock a transaction takes, so writers cannot wait on each other in a cycle.
      await recordChange(trx, this.dialect, 'balance', input.accountId);
      return { entry: toLedgerEntry(stored), balanceMicros: checkMicros(Number(updated.balance_micros)) };
    });
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
          .set((eb) => ({ balance_micros: eb('balance_micros', '-', chargedMicros) }))
          .where('id', '=', accountId)
          .execute();
      }
    });
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

  async listUsage(accountId: string, options: { limit?: number; sinceIso?: string } = {}): Promise<UsageRecord[]> {
    let query = this.db
      .selectFrom('usage_records')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc');
    if (options.sinceIso !== undefined) query = query.where('created_at', '>=', options.sinceIso);
    if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
    return (await query.execute()).map(toUsageRecord);
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
