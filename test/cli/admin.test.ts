// The operator's CLI for the admin side: `accounts set-role`, `admin-keys create | list |
// revoke`, `codes disable` and `audit`, through main(argv, io, env) on a SQLite file; every
// change it makes is in the audit log, attributed to the CLI.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isWellFormedAdminKey } from '../../src/auth/admin-key.js';
import { hashApiKey } from '../../src/auth/api-key.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';

describe('the admin side of the CLI on SQLite', () => {
  let dir: ReturnType<typeof cliDataDir>;
  let store: Store;
  const run = (...argv: string[]): Promise<Run> => runCli(dir.env, argv);
  async function runJson<T>(...argv: string[]): Promise<T> {
    const result = await run(...argv, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as T;
  }

  beforeEach(() => {
    dir = cliDataDir('lmgate-admin-cli-');
    store = openStore({ sqlitePath: join(dir.dataDir, 'lmgate.db') });
  });

  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('makes an account an operator and back, and refuses other roles', async () => {
    await runJson('accounts', 'create', '--email', 'ops@example.test');
    expect(await runJson('accounts', 'set-role', 'ops@example.test', 'operator')).toMatchObject({ email: 'ops@example.test', role: 'operator' });
    expect((await store.findAccount('ops@example.test'))?.role).toBe('operator');
    const refused = await run('accounts', 'set-role', 'ops@example.test', 'admin');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/operator or customer/);
    expect(await runJson('accounts', 'set-role', 'ops@example.test', 'customer')).toMatchObject({ role: 'customer' });
  });

  it('creates an admin key with its scopes, shown once and stored as a hash, lists and revokes it', async () => {
    const created = await runJson<{ id: string; secret: string; scopes: string; status: string }>('admin-keys', 'create', '--scope', 'credits,read', '--name', 'billing bot');
    expect(isWellFormedAdminKey(created.secret)).toBe(true);
    expect(created).toMatchObject({ scopes: 'read,credits', status: 'active' });
    const stored = await store.findAdminKeyByHash(hashApiKey(created.secret));
    expect(stored).toMatchObject({ id: created.id, name: 'billing bot', scopes: ['read', 'credits'], revokedAt: null });

    const listed = await runJson<{ id: string; key: string }[]>('admin-keys', 'list');
    expect(listed).toEqual([expect.objectContaining({ id: created.id, key: `${created.secret.slice(0, 14)}…${created.secret.slice(-4)}` })]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    expect(await runJson('admin-keys', 'revoke', created.id)).toMatchObject({ id: created.id, status: 'revoked' });
    expect((await store.findAdminKeyById(created.id))?.revokedAt).toEqual(expect.any(String));
  });

  it.each([
    [['admin-keys', 'create'], /needs --scope/],
    [['admin-keys', 'create', '--scope', 'read,root'], /no scope "root"/],
    [['admin-keys', 'revoke', 'admkey_nope'], /no admin key/],
    [['codes', 'disable'], /needs one code id/],
    [['codes', 'disable', 'code_nope'], /no code/],
    [['audit', '--limit', '0'], /--limit/],
  ])('refuses %j with a message and exit 1', async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
  });

  it('records each change in the audit log as made by the CLI, and shows it with audit', async () => {
    await runJson('accounts', 'create', '--email', 'c@example.test', '--credits', '2');
    await runJson('credits', 'grant', 'c@example.test', '3', '--reason', 'goodwill');
    await runJson('accounts', 'suspend', 'c@example.test');
    const [code] = await runJson<{ id: string }[]>('codes', 'create', '--credits', '1');
    await runJson('codes', 'disable', code!.id);

    const entries = await runJson<{ actor: string; action: string; before: string | null; after: string | null }[]>('audit');
    expect(entries.map((e) => e.action)).toEqual(['code.disable', 'codes.create', 'account.suspend', 'credits.grant', 'account.create']);
    for (const entry of entries) expect(entry.actor).toMatch(/^cli:.+/);
    expect(JSON.parse(entries[3]!.before!)).toEqual({ balance_micros: 2_000_000 });
    expect(JSON.parse(entries[3]!.after!)).toMatchObject({ balance_micros: 5_000_000, amount_micros: 3_000_000, reason: 'goodwill' });
    expect(JSON.parse(entries[2]!.after!)).toEqual({ status: 'suspended' });
    expect((await store.findRedemptionCode(code!.id))?.disabledAt).toEqual(expect.any(String));
  });
});
