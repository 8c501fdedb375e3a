import { Migrator, sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { openPostgres } from './dialects/postgres.js';
import { openSqlite } from './dialects/sqlite.js';
import { newId } from './ids.js';
import { migrationProvider } from './migrations/index.js';
import {
  NotFoundInStoreError,
  type Account,
  type AccountStatus,
  type ApiKeyRecord,
  type ChangeEvent,
  type ChangeKind,
  type NewApiKey,
  type Store,
  type SubscriptionStatus,
} from './store.js';
import type { AccountsTable, ApiKeysTable, Database } from './tables.js';

export interface StoreLocation {
  /** postgres://... when set; otherwise the SQLite file. */
  databaseUrl?: string;
  sqlitePath: string;
}

export function openStore(location: StoreLocation): Store {
  return location.databaseUrl
    ? new KyselyStore(openPostgres(location.databaseUrl), 'postgres')
    : new KyselyStore(openSqlite(location.sqlitePath), 'sqlite');
}

const now = (): string => new Date().toISOString();

export class KyselyStore implements Store {
  constructor(
    readonly db: Kysely<Database>,
    readonly dialect: 'sqlite' | 'postgres',
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
