// `lmgate store copy --to postgres://...`, driven through main(argv, io, env): a SQLite
// store filled through the real write paths (commands, usage batches, sessions) is copied
// into a fresh PostgreSQL database and read back there through the store.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key.js';
import { Authenticator } from '../../src/auth/authenticate.js';
import { KeyCache } from '../../src/auth/key-cache.js';
import { generateRedemptionCode, hashRedemptionCode } from '../../src/billing/redemption-code.js';
import { Commands } from '../../src/commands/commands.js';
import { hashPassword, verifyPassword } from '../../src/auth/passwords.js';
import { KeyRevokedError } from '../../src/errors.js';
import { KyselyStore, openStore } from '../../src/store/kysely-store.js';
import type { Db } from '../../src/store/sql.js';
import type { Session, Store, UsageRecord } from '../../src/store/store.js';
import { STORE_TABLES, type StoreTable } from '../../src/store/tables.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { allRows } from '../helpers/store-rows.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';


interface CopyJson {
  source: string;
  target: string;
  tables: Record<string, number>;
  rows: number;
  accounts_verified: number;
}

const PASSWORD = 'correct horse battery staple';
const KYSELY_BOOKKEEPING = ['kysely_migration', 'kysely_migration_lock'];
const USAGE_RECORDS = 2500; // more than one insert's worth of usage rows and ledger rows

let dataDir: string;
let env: NodeJS.ProcessEnv;
const stores: Store[] = [];

let removeDataDir = (): void => undefined;

beforeEach(() => {
  ({ dataDir, env, remove: removeDataDir } = cliDataDir('lmgate-store-copy-'));
});

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  removeDataDir();
});

const run = (...argv: string[]): Promise<Run> => runCli(env, argv);

async function openMigrated(location: { databaseUrl?: string }): Promise<Store> {
  const store = openStore({ ...location, sqlitePath: join(dataDir, 'lmgate.db') });
  stores.push(store);
  await store.migrate();
  return store;
}

function dbOf(store: Store): Db {
  if (!(store instanceof KyselyStore)) throw new Error('expected the Kysely store');
  return store.db;
}

async function rowCounts(store: Store): Promise<Record<string, number>> {
  const rows = await allRows(dbOf(store));
  return Object.fromEntries(Object.entries(rows).map(([table, list]) => [table, list.length]));
}

/** A store as an operator's months of use leave it, written by the code paths that write it in production. */
async function fillSqliteStore(store: Store) {
  const commands = new Commands(store);
  const { account: ada } = await commands.accounts.create({ email: 'ada@example.com', name: 'Ada', tier: 'free', creditsMicros: 50_000_000, creditsReason: 'welcome' });
  const { account: bob } = await commands.accounts.create({ email: 'bob@example.com', name: null, tier: 'pro', creditsMicros: 0, creditsReason: '' });
  const carol = await commands.accounts.signUp({ email: 'carol@example.com', name: 'Carol', tier: 'free', passwordHash: await hashPassword(PASSWORD), creditsMicros: 1_000_000 });
  await commands.accounts.setPassword(ada.id, await hashPassword(`${PASSWORD} (ada)`));

  const key = await commands.keys.create(ada.id, 'laptop');
  const revoked = await commands.keys.create(ada.id, 'old laptop');
  await commands.keys.revoke(revoked.record.id);
  const bobKey = await commands.keys.create(bob.id, 'ci');
  await store.touchKeys(new Map([[key.record.id, '2025-03-01T10:00:00.123Z']]));

  // Change events before `midway` are pruned, as the server prunes them: ids start above 1.
  await commands.accounts.setTier(bob.id, 'free');
  const midway = new Date();
  await commands.accounts.setStatus(bob.id, 'suspended');
  await commands.accounts.setTier(bob.id, 'pro');
  await commands.credits.adjust({ accountId: ada.id, amountMicros: -2_500_000, reason: 'refund a bad answer' });

  const [redeemed, spare] = [generateRedemptionCode(), generateRedemptionCode()];
  await store.createRedemptionCodes([
    { codeHash: hashRedemptionCode(redeemed), hint: 'LMG-…-AAAA', amountMicros: 5_000_000, expiresAt: null },
    { codeHash: hashRedemptionCode(spare), hint: 'LMG-…-BBBB', amountMicros: 3_000_000, expiresAt: '2099-12-31T23:59:59.999Z' },
  ]);
  await commands.credits.redeemCode(bob.id, redeemed);

  const usage: UsageRecord[] = Array.from({ length: USAGE_RECORDS }, (_, i) => ({
    id: `usage_${String(i).padStart(6, '0')}`,
    requestId: `req_${i}`,
    accountId: ada.id,
    keyId: key.record.id,
    model: i % 2 ? 'demo-echo' : 'demo-lorem',
    promptTokens: 10 + i,
    ...PLAIN_USAGE,
    completionTokens: i % 7,
    costMicros: i % 5 === 0 ? 0 : 3 + (i % 11),
    latencyMs: 5 + (i % 90),
    status: i % 13 === 0 ? 499 : 200,
    streamed: i % 2 === 0,
    finishReason: i % 3 === 0 ? null : 'stop',
    memberId: null,
    createdAt: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
  }));
  await store.recordUsage(usage);
  // More than bob has left: the charge is capped at his balance, the record keeps the cost.
  const capped = await store.recordUsage([{ ...usage[0]!, id: 'usage_bob', requestId: 'req_bob', accountId: bob.id, keyId: bobKey.record.id, costMicros: 9_000_000 }]);
  expect(capped).toHaveLength(1);

  const session: Session = {
    tokenHash: createHash('sha256').update(randomBytes(32)).digest('hex'),
    accountId: carol.id,
    csrfToken: randomBytes(32).toString('hex'),
    createdAt: '2025-03-02T08:00:00.000Z',
    expiresAt: '2099-03-02T08:00:00.000Z',
    lastSeenAt: '2025-03-02T09:30:00.000Z',
    authMethod: 'oidc',
    orgId: null,
  };
  await store.createSession(session);
  await store.pruneChanges(midway);

  return { ada, bob, carol, key, revoked, spare, session };
}

describe('lmgate store copy into PostgreSQL', () => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase();
  });

  afterEach(async () => {
    // Every pool on the database is closed before it is dropped.
    for (const store of stores.splice(0)) await store.close();
    await database.drop();
  });

  it('copies every row of every table, so keys, passwords, sessions and balances work on PostgreSQL', async () => {
    const sqlite = await openMigrated({});
    const fixture = await fillSqliteStore(sqlite);
    const expected = await allRows(dbOf(sqlite));
    expect(expected.change_events![0]!.id).toBeGreaterThan(1);

    const result = await run('store', 'copy', '--to', database.url, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as CopyJson;
    const counts = await rowCounts(sqlite);
    expect(report).toEqual({
      source: join(dataDir, 'lmgate.db'),
      target: database.url,
      tables: counts,
      rows: Object.values(counts).reduce((a, b) => a + b, 0),
      accounts_verified: 3,
    });
    expect(Object.keys(report.tables)).toEqual(STORE_TABLES);
    expect(counts.usage_records).toBe(USAGE_RECORDS + 1);

    const postgres = await openMigrated({ databaseUrl: database.url });
    expect(postgres.dialect).toBe('postgres');
    // Ids, hashes, timestamps, flags and amounts: every column of every row, as stored.
    expect(await allRows(dbOf(postgres))).toEqual(expected);

    for (const account of [fixture.ada, fixture.bob, fixture.carol]) {
      const balance = await sqlite.balanceOf(account.id);
      expect(await postgres.balanceOf(account.id)).toBe(balance);
      expect(await postgres.sumLedger(account.id)).toBe(balance);
      expect(await postgres.versionedBalanceOf(account.id)).toEqual(await sqlite.versionedBalanceOf(account.id));
    }
    expect(await postgres.balanceOf(fixture.bob.id)).toBe(0);

    // The key authenticates by its hash; the revoked one stays revoked.
    expect((await postgres.findKeyByHash(hashApiKey(fixture.key.secret)))?.accountId).toBe(fixture.ada.id);
    const authenticator = new Authenticator(postgres, new KeyCache());
    const principal = await authenticator.authenticate(`Bearer ${fixture.key.secret}`);
    expect(principal.account).toMatchObject({ id: fixture.ada.id, email: 'ada@example.com' });
    await expect(Promise.resolve().then(() => authenticator.authenticate(`Bearer ${fixture.revoked.secret}`))).rejects.toBeInstanceOf(KeyRevokedError);

    // The password and the session still sign in.
    expect(await verifyPassword(PASSWORD, (await postgres.findPasswordHash(fixture.carol.id))!)).toBe(true);
    expect(await verifyPassword('wrong', (await postgres.findPasswordHash(fixture.carol.id))!)).toBe(false);
    expect(await postgres.findSession(fixture.session.tokenHash)).toEqual(fixture.session);

    // New rows take ids after the copied ones: the sequences were moved past them.
    const lastLedgerId = Math.max(...expected.ledger_entries!.map((row) => Number(row.id)));
    const lastChangeId = await sqlite.latestChangeId();
    const commands = new Commands(postgres);
    const { entry } = await commands.credits.grant({ accountId: fixture.ada.id, amountMicros: 1_000_000, reason: 'after the move' });
    expect(entry.id).toBe(lastLedgerId + 1);
    expect(await postgres.latestChangeId()).toBe(lastChangeId + 1);
    // The unredeemed code still redeems, once.
    expect((await commands.credits.redeemCode(fixture.carol.id, fixture.spare)).amountMicros).toBe(3_000_000);
    expect(await postgres.sumLedger(fixture.carol.id)).toBe(await postgres.balanceOf(fixture.carol.id));
  });

  it('refuses a second copy into the now non-empty database, and writes nothing', async () => {
    const sqlite = await openMigrated({});
    await fillSqliteStore(sqlite);

    const first = await run('store', 'copy', '--to', database.url);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.out[0]).toBe(`copied ${join(dataDir, 'lmgate.db')} to ${database.url}`);
    expect(first.stdout).toMatch(/^accounts\s+3$/m);
    expect(first.stdout).toMatch(new RegExp(`^usage_records\\s+${USAGE_RECORDS + 1}$`, 'm'));
    expect(first.stdout).toMatch(/3 accounts' balances equal the sums of their ledger entries/);

    const postgres = await openMigrated({ databaseUrl: database.url });
    const copied = await allRows(dbOf(postgres));
    // The source moved on since: a second copy would duplicate and diverge.
    await new Commands(sqlite).accounts.create({ email: 'dan@example.com', name: null, tier: 'free', creditsMicros: 1, creditsReason: 'r' });

    const second = await run('store', 'copy', '--to', database.url, '--json');
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toMatch(/^lmgate: store copy: the target database is not empty \(rows in accounts, account_passwords, api_keys, /);
    expect(second.stderr).toContain('nothing was written');
    expect(await allRows(dbOf(postgres))).toEqual(copied);
  });

  it('refuses a target with a single row in any table', async () => {
    const sqlite = await openMigrated({});
    await fillSqliteStore(sqlite);
    const postgres = await openMigrated({ databaseUrl: database.url });
    await postgres.createRedemptionCodes([{ codeHash: hashRedemptionCode(generateRedemptionCode()), hint: 'LMG-…-CCCC', amountMicros: 1, expiresAt: null }]);
    const before = await allRows(dbOf(postgres));

    const result = await run('store', 'copy', '--to', database.url);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('lmgate: store copy: the target database is not empty (rows in redemption_codes); copy only into a new database, nothing was written');
    expect(await allRows(dbOf(postgres))).toEqual(before);
  });

  it('refuses a source whose balances are not the sums of their ledgers, copying nothing', async () => {
    const sqlite = await openMigrated({});
    const { ada } = await fillSqliteStore(sqlite);
    await dbOf(sqlite).updateTable('accounts').set((eb) => ({ balance_micros: eb('balance_micros', '+', 1) })).where('id', '=', ada.id).execute();

    const result = await run('store', 'copy', '--to', database.url);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^lmgate: store copy: the SQLite store does not add up, nothing was copied: account ${ada.id} in SQLite has a balance of \\d+ micros but its ledger entries sum to \\d+$`));
    const postgres = await openMigrated({ databaseUrl: database.url });
    expect(Object.values(await rowCounts(postgres)).every((count) => count === 0)).toBe(true);
  });

  it('refuses a SQLite store with a table it does not know rather than leave it behind', async () => {
    const sqlite = await openMigrated({});
    await sql`create table customer_notes (id integer primary key, body text)`.execute(dbOf(sqlite));

    const result = await run('store', 'copy', '--to', database.url);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      "lmgate: store copy: the SQLite store's tables are not the ones this version of lmgate copies (unknown: customer_notes; missing: none)",
    );
  });

  it('continues ids where SQLite left off, even when the newest change events were pruned', async () => {
    const sqlite = await openMigrated({});
    const commands = new Commands(sqlite);
    const { account } = await commands.accounts.create({ email: 'eve@example.com', name: null, tier: 'free', creditsMicros: 0, creditsReason: '' });
    await commands.credits.grant({ accountId: account.id, amountMicros: 2_000_000, reason: 'welcome' });
    await commands.accounts.setStatus(account.id, 'suspended');
    const lastChangeId = await sqlite.latestChangeId();
    expect(lastChangeId).toBeGreaterThan(0);
    await sqlite.pruneChanges(new Date(Date.now() + 60_000));
    expect(await sqlite.latestChangeId()).toBe(0);

    const result = await run('store', 'copy', '--to', database.url, '--json');
    expect(result.stderr).toBe('');
    expect((JSON.parse(result.stdout) as CopyJson).tables).toMatchObject({ accounts: 1, ledger_entries: 1, change_events: 0 });

    // Instances follow the change feed by id: a reused id could be taken for one already seen.
    const postgres = await openMigrated({ databaseUrl: database.url });
    await new Commands(postgres).accounts.setStatus(account.id, 'active');
    expect(await postgres.latestChangeId()).toBe(lastChangeId + 1);
  });

  it('copies every table the migrations create, each after the tables its foreign keys point to', async () => {
    const sqlite = await openMigrated({});
    const postgres = await openMigrated({ databaseUrl: database.url });
    const { rows: sqliteTables } = await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(dbOf(sqlite));
    const created = sqliteTables.map((r) => r.name).filter((name) => !name.startsWith('sqlite_') && !KYSELY_BOOKKEEPING.includes(name));
    expect([...STORE_TABLES].sort()).toEqual(created.sort());

    // Monthly partitions (migration 0020) are their parent's rows, not tables of their own.
    const { rows: postgresTables } = await sql<{ table_name: string }>`
      select relname as table_name from pg_class
      where relnamespace = to_regnamespace(current_schema()) and relkind in ('r', 'p') and not relispartition`.execute(dbOf(postgres));
    expect(postgresTables.map((r) => r.table_name).filter((name) => !KYSELY_BOOKKEEPING.includes(name)).sort()).toEqual(created.sort());

    for (const [position, table] of STORE_TABLES.entries()) {
      const { rows } = await sql<{ table: StoreTable }>`select "table" from pragma_foreign_key_list(${table})`.execute(dbOf(sqlite));
      for (const { table: parent } of rows) expect(STORE_TABLES.indexOf(parent), `${table} → ${parent}`).toBeLessThan(position);
    }
  });
});

describe('lmgate store copy refusals', () => {
  it('needs --to naming a PostgreSQL database, and never echoes a password', async () => {
    const refusals: Array<[string[], RegExp]> = [
      [['store', 'copy'], /^lmgate: store copy needs --to postgres:\/\/user@host:5432\/database: the PostgreSQL database/],
      [['store', 'copy', '--to', ''], /needs --to postgres:\/\//],
      [['store', 'copy', '--to', 'mysql://root:hunter2@db/lmgate'], /--to must name a PostgreSQL database .*not a mysql:\/\/ URL/],
      [['store', 'copy', '--to', 'sqlite:///var/lib/lmgate.db'], /must name a PostgreSQL database/],
      [['store', 'copy', '--to', './data/lmgate.db'], /--to is not a URL/],
      [['store', 'copy', '--to', 'postgres://u@h/db', 'now'], /unexpected "now"/],
      [['store', 'move', '--to', 'postgres://u@h/db'], /store: expected copy/],
      [['store'], /store: expected copy/],
    ];
    for (const [argv, message] of refusals) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr, argv.join(' ')).toMatch(message);
      expect(result.stderr).not.toContain('hunter2');
      expect(result.stdout).toBe('');
    }
  });

  it('refuses a target it cannot prepare, giving the database’s reason and no password', async () => {
    await openMigrated({});
    const missing = `lmgate_missing_${randomBytes(6).toString('hex')}`;
    const result = await run('store', 'copy', '--to', `postgres://postgres:hunter2@127.0.0.1:5432/${missing}`);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `lmgate: store copy: PostgreSQL at postgres://postgres@127.0.0.1:5432/${missing} has no database "${missing}": create it first (createdb ${missing}, or CREATE DATABASE "${missing}"), then start again`,
    );
    expect(result.stderr).not.toContain('hunter2');
  });

  it('refuses when there is no SQLite store to copy, without creating one', async () => {
    const result = await run('store', 'copy', '--to', 'postgres://postgres@127.0.0.1:5432/unused');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`lmgate: store copy: no SQLite store at ${join(dataDir, 'lmgate.db')} (store.sqlite_path, or lmgate.db in the data directory)`);
    expect(existsSync(join(dataDir, 'lmgate.db'))).toBe(false);
  });

  it('lists store copy in the usage text', async () => {
    expect((await run('--help')).stdout).toContain('store copy --to URL');
    const help = await run('store', 'copy', '--help');
    expect(help.stdout).toContain('usage: lmgate store copy --to URL');
    expect(help.stdout).toContain('DATABASE_URL=URL');
  });
});

