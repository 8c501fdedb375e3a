// The operator CLI, driven through main(argv, io, env) against a SQLite file in a temporary
// data directory, and once against PostgreSQL through DATABASE_URL.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticate.js';
import { KeyCache } from '../../src/auth/key-cache.js';
import { MIGRATION_NAMES } from '../../src/store/migrations/index.js';
import { main } from '../../src/cli/main.js';
import { KeyRevokedError } from '../../src/errors.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';


const SECRET_PATTERN = /sk-lmg-[0-9A-Za-z]{49}/g;

describe('the lmgate CLI on SQLite', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  const stores: Store[] = [];

  let removeDataDir = (): void => undefined;

  beforeEach(() => {
    ({ dataDir, env, remove: removeDataDir } = cliDataDir('lmgate-cli-'));
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    removeDataDir();
  });

  const run = (...argv: string[]): Promise<Run> => runCli(env, argv);

  async function runJson<T>(...argv: string[]): Promise<T> {
    const result = await run(...argv, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toHaveLength(1);
    return JSON.parse(result.out[0]!) as T;
  }

  /** The store file the CLI wrote, opened as a server would open it. */
  async function serverStore(): Promise<Store> {
    const store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
    stores.push(store);
    return store;
  }

  async function authenticatorOnSameFile(): Promise<Authenticator> {
    const store = await serverStore();
    return new Authenticator(store, new KeyCache());
  }

  /** `label  value` lines of a printed record, as a map. */
  function fields(lines: string[]): Map<string, string> {
    return new Map(
      lines.map((line) => {
        const match = /^(\S+)\s+(.*)$/.exec(line);
        if (!match) throw new Error(`not a record line: ${JSON.stringify(line)}`);
        return [match[1]!, match[2]!];
      }),
    );
  }

  it('creates an account and prints it as label and value lines, in the data directory’s store', async () => {
    const result = await run('accounts', 'create', '--email', 'Alice@Example.com', '--name', 'Alice');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const record = fields(result.out);
    expect(record.get('id')).toMatch(/^acct_[0-9A-Za-z]{20}$/);
    expect(record.get('email')).toBe('alice@example.com');
    expect(record.get('name')).toBe('Alice');
    expect(record.get('status')).toBe('active');
    expect(record.get('tier')).toBe('free');

    expect(existsSync(join(dataDir, 'lmgate.db'))).toBe(true);
    const stored = await (await serverStore()).findAccount('alice@example.com');
    expect(stored?.id).toBe(record.get('id'));
  });

  it('creates an account with --json and --tier', async () => {
    const account = await runJson<Record<string, unknown>>('accounts', 'create', '--email', 'bob@example.com', '--tier', 'pro');
    expect(account).toMatchObject({ email: 'bob@example.com', tier: 'pro', status: 'active', name: null, subscription_status: 'inactive' });
    expect(account.id).toMatch(/^acct_/);
    expect(typeof account.created_at).toBe('string');
  });

  it('refuses a duplicate email, in any case, with a message on stderr and exit 1', async () => {
    expect((await run('accounts', 'create', '--email', 'dup@example.com')).code).toBe(0);
    const result = await run('accounts', 'create', '--email', 'DUP@example.com');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^lmgate: .*already exists/);
    expect(await (await serverStore()).listAccounts()).toHaveLength(1);
  });

  it('refuses an account without a valid email or with an unknown tier', async () => {
    const noEmail = await run('accounts', 'create');
    expect(noEmail.code).toBe(1);
    expect(noEmail.stderr).toContain('--email');

    const badEmail = await run('accounts', 'create', '--email', 'not-an-email');
    expect(badEmail.code).toBe(1);

    const badTier = await run('accounts', 'create', '--email', 'tier@example.com', '--tier', 'platinum');
    expect(badTier.code).toBe(1);
    expect(badTier.stderr).toContain('platinum');
    expect(await (await serverStore()).listAccounts()).toEqual([]);
  });

  it('lists accounts as a table and as JSON, in the store’s order', async () => {
    const first = await runJson<{ id: string }>('accounts', 'create', '--email', 'first@example.com');
    const second = await runJson<{ id: string }>('accounts', 'create', '--email', 'second@example.com', '--tier', 'pro');

    const table = await run('accounts', 'list');
    expect(table.code).toBe(0);
    expect(table.out[0]!.split(/\s+/)).toEqual(['id', 'email', 'status', 'tier', 'served_tier', 'created_at']);
    expect(table.out).toHaveLength(3);
    const emails = table.out.slice(1).map((line) => line.split(/\s+/)[1]);
    expect(new Set(emails)).toEqual(new Set(['first@example.com', 'second@example.com']));

    const listed = await runJson<Array<{ id: string; email: string; tier: string }>>('accounts', 'list');
    const byId = new Map(listed.map((a) => [a.id, a]));
    expect(byId.get(first.id)?.email).toBe('first@example.com');
    expect(byId.get(second.id)?.tier).toBe('pro');
    const stored = await (await serverStore()).listAccounts();
    expect(listed.map((a) => a.id)).toEqual(stored.map((a) => a.id));
  });

  it('shows an account by email in any case and by id', async () => {
    const created = await runJson<{ id: string }>('accounts', 'create', '--email', 'carol@example.com');
    const byEmail = await runJson<{ id: string; email: string }>('accounts', 'show', 'Carol@EXAMPLE.com');
    const byId = await runJson<{ id: string; email: string }>('accounts', 'show', created.id);
    expect(byEmail).toEqual(byId);
    expect(byId).toMatchObject({ id: created.id, email: 'carol@example.com' });

    const text = await run('accounts', 'show', created.id);
    expect(fields(text.out).get('email')).toBe('carol@example.com');
  });

  it('fails with exit 1 for an account that does not exist', async () => {
    for (const argv of [
      ['accounts', 'show', 'ghost@example.com'],
      ['accounts', 'show', 'acct_00000000000000000000'],
      ['accounts', 'suspend', 'ghost@example.com'],
      ['keys', 'create', 'ghost@example.com'],
      ['keys', 'list', 'ghost@example.com'],
    ]) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr).toContain('no account');
      expect(result.stdout).toBe('');
    }
  });

  it('suspends and reactivates an account', async () => {
    const created = await runJson<{ id: string }>('accounts', 'create', '--email', 'dave@example.com');
    const store = await serverStore();
    const before = await store.latestChangeId();

    expect(await runJson('accounts', 'suspend', 'dave@example.com')).toMatchObject({ id: created.id, status: 'suspended' });
    expect((await store.findAccount(created.id))?.status).toBe('suspended');

    expect(await runJson('accounts', 'reactivate', created.id)).toMatchObject({ status: 'active' });
    expect((await store.findAccount(created.id))?.status).toBe('active');
    // Running servers learn of both through the change feed.
    expect((await store.changesAfter(before)).map((e) => e.subjectId)).toEqual([created.id, created.id]);
  });

  it('sets a configured tier and refuses an unknown one', async () => {
    const created = await runJson<{ id: string }>('accounts', 'create', '--email', 'erin@example.com');
    // pro needs a subscription the account lacks: set, with a warning (comp-plans.test.ts).
    const toPro = await run('accounts', 'set-tier', created.id, 'pro', '--json');
    expect(JSON.parse(toPro.stdout)).toMatchObject({ tier: 'pro' });
    expect(toPro.stderr).toMatch(/^pro needs a subscription/);

    const unknown = await run('accounts', 'set-tier', created.id, 'platinum');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('platinum');
    expect((await (await serverStore()).findAccount(created.id))?.tier).toBe('pro');

    const missing = await run('accounts', 'set-tier', created.id);
    expect(missing.code).toBe(1);

    // A tier later removed from the config: the account is served as the default tier, and says so.
    await (await serverStore()).setAccountTier(created.id, 'platinum');
    expect(await runJson('accounts', 'show', created.id)).toMatchObject({ tier: 'platinum', served_tier: 'free' });
    expect(await runJson('accounts', 'list')).toContainEqual(expect.objectContaining({ id: created.id, tier: 'platinum', served_tier: 'free' }));
  });

  it('sets an account’s price multiplier as a decimal, kept as parts per million, and refuses what is not one', async () => {
    const created = await runJson<{ id: string }>('accounts', 'create', '--email', 'fay@example.com');
    expect(await runJson('accounts', 'set-price-multiplier', created.id, '0.85')).toMatchObject({ price_multiplier: 0.85 });
    expect((await (await serverStore()).findAccount(created.id))?.priceMultiplierPpm).toBe(850_000);
    for (const bad of ['0', '-1', 'cheap', '1.0000001', '5000']) {
      const refused = await run('accounts', 'set-price-multiplier', created.id, bad);
      expect(refused.code, bad).toBe(1);
    }
    expect((await (await serverStore()).findAccount(created.id))?.priceMultiplierPpm).toBe(850_000);
  });

  it('creates a key that prints its secret exactly once and authenticates against the same store', async () => {
    const account = await runJson<{ id: string }>('accounts', 'create', '--email', 'frank@example.com');
    const result = await run('keys', 'create', 'frank@example.com', '--name', 'ci');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const secrets = result.stdout.match(SECRET_PATTERN) ?? [];
    expect(secrets).toHaveLength(1);
    const secret = secrets[0]!;
    expect(result.out.filter((line) => line === secret)).toHaveLength(1);

    const authenticator = await authenticatorOnSameFile();
    const principal = await authenticator.authenticate(`Bearer ${secret}`);
    expect(principal.account.id).toBe(account.id);
    expect(principal.key.name).toBe('ci');
    expect(result.stdout).toContain(principal.key.id);
  });

  it('creates a key with --json holding the secret and the masked key', async () => {
    await runJson('accounts', 'create', '--email', 'grace@example.com');
    const key = await runJson<{ id: string; secret: string; key: string; status: string; name: string }>('keys', 'create', 'grace@example.com');
    expect(key.secret).toMatch(/^sk-lmg-[0-9A-Za-z]{49}$/);
    expect(key.key).toBe(`${key.secret.slice(0, 11)}…${key.secret.slice(-4)}`);
    expect(key).toMatchObject({ status: 'active', name: 'default' });
    expect((await (await authenticatorOnSameFile()).authenticate(`Bearer ${key.secret}`)).key.id).toBe(key.id);
  });

  it('creates a key with controls, updates them (none clears one), and refuses bad values naming the flag', async () => {
    await runJson('accounts', 'create', '--email', 'kim@example.com');
    const key = await runJson<Record<string, unknown>>(
      'keys', 'create', 'kim@example.com', '--name', 'ci', '--expires', '2999-12-31', '--models', 'demo-echo, gpt-*', '--ips', '10.0.0.0/8,2001:db8::/32', '--rpm', '30',
    );
    expect(key).toMatchObject({ name: 'ci', expires: 'end of 2999-12-31 UTC', expires_at: '3000-01-01T00:00:00.000Z', models: 'demo-echo,gpt-*', ips: '10.0.0.0/8,2001:db8::/32', rpm: 30 });
    // As text, the expiry reads as it was given, not as the next day's midnight.
    const shown = await run('keys', 'update', key.id as string, '--rpm', '30');
    expect(shown.out).toContain('expires       end of 2999-12-31 UTC');
    expect(shown.stdout).not.toContain('3000-01-01');

    const updated = await runJson<Record<string, unknown>>('keys', 'update', key.id as string, '--name', 'deploy', '--models', 'none', '--rpm', '5');
    expect(updated).toMatchObject({ name: 'deploy', models: null, ips: '10.0.0.0/8,2001:db8::/32', rpm: 5, expires_at: '3000-01-01T00:00:00.000Z' });
    const stored = (await (await serverStore()).findKeyById(key.id as string))!;
    expect(stored.controls).toEqual({ expiresAt: '3000-01-01T00:00:00.000Z', allowedModels: null, allowedIps: ['10.0.0.0/8', '2001:db8::/32'], rpm: 5, creditLimit: null });

    const badIps = await run('keys', 'update', key.id as string, '--ips', '10.0.0.0/40');
    expect(badIps.code).toBe(1);
    expect(badIps.stderr).toContain('--ips: “10.0.0.0/40” is not an IP address or CIDR range.');
    const badRpm = await run('keys', 'update', key.id as string, '--rpm', 'many');
    expect(badRpm.code).toBe(1);
    expect(badRpm.stderr).toContain('--rpm');
    const nothing = await run('keys', 'update', key.id as string);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('nothing to change');
  });

  it('sets a key’s credit limit, in total or per month, changes and clears it, and refuses bad amounts', async () => {
    await runJson('accounts', 'create', '--email', 'lee@example.com');
    const key = await runJson<Record<string, unknown>>('keys', 'create', 'lee@example.com', '--credit-limit', '25/month');
    expect(key).toMatchObject({ credit_limit: '25 per month', credit_limit_micros: 25_000_000, credit_limit_period: 'month' });
    const store = await serverStore();
    expect((await store.findKeyById(key.id as string))!.controls.creditLimit).toEqual({ amountMicros: 25_000_000, period: 'month' });

    const total = await runJson<Record<string, unknown>>('keys', 'update', key.id as string, '--credit-limit', '0.5');
    expect(total).toMatchObject({ credit_limit: '0.5 in total', credit_limit_micros: 500_000, credit_limit_period: 'total' });
    const human = await run('keys', 'list', 'lee@example.com');
    expect(human.code).toBe(0);
    const cleared = await runJson<Record<string, unknown>>('keys', 'update', key.id as string, '--credit-limit', 'none');
    expect(cleared).toMatchObject({ credit_limit: null, credit_limit_micros: null, credit_limit_period: null });
    expect((await store.findKeyById(key.id as string))!.controls.creditLimit).toBeNull();

    for (const [value, message] of [
      ['0', 'must not be zero'],
      ['-3', 'more than zero'],
      ['lots', 'not an amount of credits'],
      ['5/week', 'A credit limit applies in total or per month.'],
      ['5/month/extra', 'per month (25/month)'],
      ['2000000000', 'at most 1,000,000,000 credits'],
    ]) {
      const bad = await run('keys', 'update', key.id as string, '--credit-limit', value!);
      expect(bad.code, value).toBe(1);
      expect(bad.stderr, value).toContain('--credit-limit');
      expect(bad.stderr, value).toContain(message);
    }
  });

  it('lists keys with the masked key and never the secret', async () => {
    await runJson('accounts', 'create', '--email', 'heidi@example.com');
    const one = await runJson<{ id: string; secret: string }>('keys', 'create', 'heidi@example.com', '--name', 'one');
    const two = await runJson<{ id: string; secret: string }>('keys', 'create', 'heidi@example.com', '--name', 'two');

    const table = await run('keys', 'list', 'heidi@example.com');
    expect(table.code).toBe(0);
    expect(table.out).toHaveLength(3);
    for (const key of [one, two]) {
      expect(table.stdout).not.toContain(key.secret);
      expect(table.stdout).not.toContain(key.secret.slice(11, -4));
      expect(table.stdout).toContain(`${key.secret.slice(0, 11)}…${key.secret.slice(-4)}`);
      expect(table.stdout).toContain(key.id);
    }

    const listed = await run('keys', 'list', 'heidi@example.com', '--json');
    expect(listed.stdout).not.toMatch(SECRET_PATTERN);
    const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.name).sort()).toEqual(['one', 'two']);
    for (const row of rows) {
      expect(Object.keys(row)).not.toContain('secret');
      expect(Object.keys(row)).not.toContain('key_hash');
    }
  });

  it('revokes a key so that it no longer authenticates, and revoking again keeps the first time', async () => {
    await runJson('accounts', 'create', '--email', 'ivan@example.com');
    const key = await runJson<{ id: string; secret: string }>('keys', 'create', 'ivan@example.com');

    const revoked = await runJson<{ status: string; revoked_at: string }>('keys', 'revoke', key.id);
    expect(revoked.status).toBe('revoked');
    expect(typeof revoked.revoked_at).toBe('string');
    const again = await runJson<{ status: string; revoked_at: string }>('keys', 'revoke', key.id);
    expect(again.revoked_at).toBe(revoked.revoked_at);

    await expect((await authenticatorOnSameFile()).authenticate(`Bearer ${key.secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    const listed = await runJson<Array<{ id: string; status: string }>>('keys', 'list', 'ivan@example.com');
    expect(listed).toMatchObject([{ id: key.id, status: 'revoked' }]);
  });

  it('fails with exit 1 when revoking a key that does not exist', async () => {
    const result = await run('keys', 'revoke', 'key_00000000000000000000');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('key_00000000000000000000');
    expect((await run('keys', 'revoke')).code).toBe(1);
  });

  it('fails on an unknown command, subcommand or option', async () => {
    const command = await run('frobnicate');
    expect(command.code).not.toBe(0);
    expect(command.stderr).toContain('frobnicate');
    expect(command.stdout).toBe('');

    expect((await run('accounts', 'explode')).code).not.toBe(0);
    expect((await run('keys', 'explode')).code).not.toBe(0);

    const option = await run('accounts', 'list', '--colour');
    expect(option.code).not.toBe(0);
    expect(option.stderr).toContain('--colour');
  });

  it('prints usage for --help with exit 0, and to stderr with a failure when no command is given', async () => {
    for (const [argv, line] of [[['--help'], 'keys create | update'], [['-h'], 'keys create | update'], [['accounts', '--help'], 'lmgate accounts create --email E']] as const) {
      const help = await run(...argv);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('usage:');
      expect(help.stdout).toContain(line);
      expect(help.stderr).toBe('');
    }
    const none = await run();
    expect(none.code).not.toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('usage: lmgate');
  });

  it('migrates once and then reports nothing to do', async () => {
    expect(await runJson('migrate')).toEqual({ applied: MIGRATION_NAMES });
    expect(await runJson('migrate')).toEqual({ applied: [] });
    expect((await run('migrate')).stdout).toBe('up to date');
  });

  it('fails with exit 1 naming the variable when the environment is invalid', async () => {
    env.LMGATE_PORT = 'eighty';
    const result = await run('accounts', 'list');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('LMGATE_PORT');
  });
});

describe('the lmgate CLI on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'lmgate-cli-pg-'));
  });

  afterEach(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  });

  it('creates an account and a key in the database named by DATABASE_URL, and revokes it', async () => {
    const configFile = join(dataDir, 'lmgate.yaml');
    writeFileSync(configFile, '');
    const env = { DATABASE_URL: database.url, LMGATE_DATA_DIR: dataDir, LMGATE_CONFIG: configFile };
    const run = async (...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, env);
      return { code, out, err };
    };

    const created = await run('accounts', 'create', '--email', 'Pat@Example.com', '--json');
    expect(created.err).toEqual([]);
    expect(created.code).toBe(0);
    const account = JSON.parse(created.out[0]!) as { id: string; email: string };
    expect(account.email).toBe('pat@example.com');
    expect((await run('accounts', 'create', '--email', 'pat@example.com')).code).toBe(1);

    const keyRun = await run('keys', 'create', account.id, '--json');
    expect(keyRun.code).toBe(0);
    const key = JSON.parse(keyRun.out[0]!) as { id: string; secret: string };

    const store = openStore({ databaseUrl: database.url, sqlitePath: join(dataDir, 'unused.db') });
    try {
      expect(store.dialect).toBe('postgres');
      const authenticator = new Authenticator(store, new KeyCache());
      expect((await authenticator.authenticate(`Bearer ${key.secret}`)).account.id).toBe(account.id);

      const list = await run('keys', 'list', 'pat@example.com');
      expect(list.code).toBe(0);
      expect(list.out.join('\n')).not.toContain(key.secret);

      expect((await run('keys', 'revoke', key.id)).code).toBe(0);
      const fresh = new Authenticator(store, new KeyCache());
      await expect(fresh.authenticate(`Bearer ${key.secret}`)).rejects.toBeInstanceOf(KeyRevokedError);
    } finally {
      await store.close();
    }
    // Nothing went to a SQLite file on the side.
    expect(existsSync(join(dataDir, 'lmgate.db'))).toBe(false);
  });
});
