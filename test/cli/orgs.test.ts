// The organisation commands on SQLite: orgs create | list | show | add-member |
// remove-member | require-sso, keys create --org --member, credits grant --org and
// budgets set | list, each with its refusals; every change audited.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';

describe('organisations in the CLI', () => {
  let dir: ReturnType<typeof cliDataDir>;
  let store: Store;
  const run = (...argv: string[]): Promise<Run> => runCli(dir.env, argv);
  const json = async (...argv: string[]): Promise<Record<string, unknown>> => {
    const result = await run(...argv, '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };

  beforeEach(async () => {
    dir = cliDataDir('lmgate-orgs-cli-');
    store = openStore({ sqlitePath: join(dir.dataDir, 'lmgate.db') });
    for (const email of ['ada@example.test', 'bob@example.test', 'cy@example.test']) expect((await run('accounts', 'create', '--email', email)).code).toBe(0);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('makes an organisation with its owner, adds members with roles, and shows them', async () => {
    const created = await json('orgs', 'create', 'Acme', '--owner', 'ada@example.test');
    expect(created).toMatchObject({ name: 'Acme', owner: 'ada@example.test', require_sso: false });
    await json('orgs', 'add-member', 'Acme', 'bob@example.test', '--role', 'admin');
    await json('orgs', 'add-member', String(created.id), 'cy@example.test');
    const shown = await json('orgs', 'show', 'Acme');
    expect(shown.members).toEqual([
      { email: 'ada@example.test', role: 'owner', joined_at: expect.any(String) },
      { email: 'bob@example.test', role: 'admin', joined_at: expect.any(String) },
      { email: 'cy@example.test', role: 'member', joined_at: expect.any(String) },
    ]);
    const listed = JSON.parse((await run('orgs', 'list', '--json')).stdout) as Record<string, unknown>[];
    expect(listed).toEqual([expect.objectContaining({ name: 'Acme', members: 3, balance: '0' })]);
    expect((await run('orgs', 'show', 'Acme')).stdout).toMatch(/bob@example\.test\s+admin/);

    const audit = await store.listAudit({ limit: 10 });
    expect(audit.map((entry) => entry.action)).toEqual(expect.arrayContaining(['org.create', 'org.set_member']));
  });

  it('refuses what it cannot do, in one line each', async () => {
    await json('orgs', 'create', 'Acme', '--owner', 'ada@example.test');
    const cases: [string[], RegExp][] = [
      [['orgs', 'create', 'Acme', '--owner', 'bob@example.test'], /an organisation named "Acme" already exists/],
      [['orgs', 'create', 'Other'], /needs --owner/],
      [['orgs', 'create', 'Other', '--owner', 'nobody@example.test'], /no account "nobody@example\.test"/],
      [['orgs', 'add-member', 'Nope', 'bob@example.test'], /no organisation "Nope"/],
      [['orgs', 'add-member', 'Acme', 'bob@example.test', '--role', 'boss'], /--role: expected one of owner, admin, billing, member/],
      [['orgs', 'add-member', 'Acme', 'new@example.test'], /create it first/],
      [['orgs', 'remove-member', 'Acme', 'bob@example.test'], /bob@example\.test is not a member of Acme/],
      [['orgs', 'remove-member', 'Acme', 'ada@example.test'], /keeps at least one owner/],
      [['keys', 'create', '--org', 'Acme', '--name', 'k'], /needs --member/],
      [['keys', 'create', '--org', 'Acme', '--member', 'bob@example.test'], /bob@example\.test is not a member of Acme/],
      [['budgets', 'set', '--org', 'Acme', '--monthly', '0'], /--monthly: the amount must not be zero/],
      [['budgets', 'set', '--org', 'Acme'], /needs --monthly/],
    ];
    for (const [argv, message] of cases) {
      const refused = await run(...argv);
      expect(refused.code, argv.join(' ')).toBe(1);
      expect(refused.stderr).toMatch(message);
    }
  });

  it('gives the organisation credits and keys made by its members; budgets; keys kept or revoked with a leaving member', async () => {
    const org = await json('orgs', 'create', 'Acme', '--owner', 'ada@example.test');
    await json('orgs', 'add-member', 'Acme', 'bob@example.test');
    expect(await json('credits', 'grant', '--org', 'Acme', '25', '--reason', 'welcome')).toMatchObject({ account_id: org.id, balance: '25' });

    const key = await json('keys', 'create', '--org', 'Acme', '--member', 'bob@example.test', '--name', 'bob laptop');
    expect(await store.findKeyById(String(key.id))).toMatchObject({ accountId: org.id, memberId: (await store.findAccount('bob@example.test'))!.id });

    expect(await json('budgets', 'set', '--org', 'Acme', '--member', 'bob@example.test', '--monthly', '5')).toMatchObject({ budget: 'bob@example.test', monthly: '5 credits' });
    expect(await json('budgets', 'set', '--org', 'Acme', '--monthly', '20')).toMatchObject({ budget: '(whole organisation)' });
    const budgets = JSON.parse((await run('budgets', 'list', '--org', 'Acme', '--json')).stdout);
    expect(budgets).toEqual([
      { budget: '(whole organisation)', monthly: '20', monthly_micros: 20_000_000 },
      { budget: 'bob@example.test', monthly: '5', monthly_micros: 5_000_000 },
    ]);
    await json('budgets', 'set', '--org', 'Acme', '--monthly', 'none');
    expect(await store.listBudgets(String(org.id))).toEqual([{ memberId: (await store.findAccount('bob@example.test'))!.id, monthlyMicros: 5_000_000 }]);

    expect(await json('orgs', 'remove-member', 'Acme', 'bob@example.test', '--revoke-keys')).toMatchObject({ removed: 'bob@example.test', keys: '1 revoked' });
    expect((await store.findKeyById(String(key.id)))?.revokedAt).not.toBeNull();
    // Their budget left with them.
    expect(await store.listBudgets(String(org.id))).toEqual([]);
  });

  it('requires single sign-on for an organisation, and lets it go again', async () => {
    await json('orgs', 'create', 'Acme', '--owner', 'ada@example.test');
    expect(await json('orgs', 'require-sso', 'Acme', 'on')).toMatchObject({ require_sso: true });
    expect((await store.findOrg('Acme'))?.requireSso).toBe(true);
    expect(await json('orgs', 'require-sso', 'Acme', 'off')).toMatchObject({ require_sso: false });
    expect((await run('orgs', 'require-sso', 'Acme', 'maybe')).stderr).toMatch(/on\|off/);
  });
});
