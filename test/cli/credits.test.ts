// `lmgate credits grant | adjust | ledger` and the credits of `accounts create | show`,
// driven through main(argv, io, env) against a SQLite file, and once against PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

interface Run {
  code: number;
  out: string[];
  stdout: string;
  stderr: string;
}

interface EntryJson {
  id: number;
  account_id: string;
  kind: string;
  amount: string;
  amount_micros: number;
  reason: string | null;
  reference: string | null;
  created_at: string;
  balance: string;
  balance_micros: number;
}

interface LedgerJson {
  account_id: string;
  email: string;
  balance: string;
  balance_micros: number;
  entries: Omit<EntryJson, 'balance' | 'balance_micros'>[];
}

function runner(env: NodeJS.ProcessEnv) {
  async function run(...argv: string[]): Promise<Run> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
    return { code, out, stdout: out.join('\n'), stderr: err.join('\n') };
  }
  async function runJson<T>(...argv: string[]): Promise<T> {
    // Before the arguments: after a `--` it would be a positional.
    const result = await run('--json', ...argv);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toHaveLength(1);
    return JSON.parse(result.out[0]!) as T;
  }
  return { run, runJson };
}

describe('lmgate credits on SQLite', () => {
  let dataDir: string;
  let run: (...argv: string[]) => Promise<Run>;
  let runJson: <T>(...argv: string[]) => Promise<T>;
  let store: Store;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'lmgate-credits-'));
    const configFile = join(dataDir, 'lmgate.yaml');
    writeFileSync(configFile, '');
    ({ run, runJson } = runner({ LMGATE_DATA_DIR: dataDir, LMGATE_CONFIG: configFile }));
    // The file the CLI writes, opened as a server would open it.
    store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function newAccount(email = 'ada@example.com'): Promise<string> {
    return (await runJson<{ id: string }>('accounts', 'create', '--email', email)).id;
  }

  /** The stored balance, after checking that it is the sum of the ledger. */
  async function balanceOf(accountId: string): Promise<number> {
    const balance = await store.balanceOf(accountId);
    expect(await store.sumLedger(accountId)).toBe(balance);
    return balance;
  }

  it('grants credits to an account by email or id, printing the entry and the new balance', async () => {
    const accountId = await newAccount();
    const before = await store.latestChangeId();

    const first = await runJson<EntryJson>('credits', 'grant', 'ADA@example.com', '12.5', '--reason', 'welcome');
    expect(first).toMatchObject({
      account_id: accountId,
      kind: 'grant',
      amount: '12.5',
      amount_micros: 12_500_000,
      reason: 'welcome',
      reference: null,
      balance: '12.5',
      balance_micros: 12_500_000,
    });
    const second = await runJson<EntryJson>('credits', 'grant', accountId, '0.000001', '--reason', 'one micro');
    expect(second).toMatchObject({ amount_micros: 1, balance: '12.500001', balance_micros: 12_500_001 });
    expect(await balanceOf(accountId)).toBe(12_500_001);

    // Running instances hear of it through the change feed.
    expect((await store.changesAfter(before)).map((e) => [e.kind, e.subjectId])).toEqual([
      ['balance', accountId],
      ['balance', accountId],
    ]);

    const text = await run('credits', 'grant', accountId, '+3', '--reason', 'text output');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^amount\s+3$/m);
    expect(text.stdout).toMatch(/^balance\s+15\.500001$/m);
    expect(text.stdout).toMatch(/^balance_micros\s+15500001$/m);
  });

  it('refuses a grant that is not a positive amount of credits with at most 6 decimals, and writes nothing', async () => {
    const accountId = await newAccount();
    const refusals: Array<[string[], RegExp]> = [
      [['abc'], /not an amount/],
      [['NaN'], /not an amount/],
      [['Infinity'], /not an amount/],
      [['1e3'], /not an amount/],
      [['0x10'], /not an amount/],
      [['1,5'], /not an amount/],
      [['0.0000001'], /more than 6 decimals/],
      [['1.1234567'], /more than 6 decimals/],
      [['0'], /must not be zero/],
      [['0.000000'], /must not be zero/],
      [['--', '-5'], /more than zero/],
      [['--amount=-5'], /more than zero/],
      [['99999999999'], /too large/],
      [[], /needs an amount/],
      [['5', '6'], /unexpected "6"/],
      [['5', '--amount', '6'], /unexpected "5"/],
    ];
    for (const [amount, message] of refusals) {
      const argv = ['credits', 'grant', accountId, '--reason', 'r', ...amount];
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr, argv.join(' ')).toMatch(message);
      expect(result.stderr).toMatch(/^lmgate: /);
      expect(result.stdout).toBe('');
    }
    const noReason = await run('credits', 'grant', accountId, '5');
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toContain('--reason');
    expect((await run('credits', 'grant', accountId, '5', '--reason', '  ')).code).toBe(1);

    expect(await store.listLedger(accountId)).toEqual([]);
    expect(await balanceOf(accountId)).toBe(0);
  });

  it('adjusts by a positive or a negative amount, written after -- or with --amount', async () => {
    const accountId = await newAccount();
    await runJson('credits', 'grant', accountId, '10', '--reason', 'start');

    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '--reason', 'refund a bad answer', '--', '-2.5')).toMatchObject({
      kind: 'adjustment',
      amount: '-2.5',
      amount_micros: -2_500_000,
      reason: 'refund a bad answer',
      balance_micros: 7_500_000,
    });
    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '--amount=-0.5', '--reason', 'r')).toMatchObject({ balance: '7' });
    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '--amount', '-1', '--reason', 'r')).toMatchObject({ balance: '6' });
    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '4.25', '--reason', 'r')).toMatchObject({ balance: '10.25' });
    expect(await balanceOf(accountId)).toBe(10_250_000);
  });

  it('refuses an adjustment that would take the balance below zero, with exit 1 and nothing changed', async () => {
    const accountId = await newAccount();
    await runJson('credits', 'grant', accountId, '1', '--reason', 'start');
    const before = await store.latestChangeId();

    const refused = await run('credits', 'adjust', 'ada@example.com', '--reason', 'too much', '--', '-1.000001');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^lmgate: refused: .*below zero/);
    expect(refused.stderr).toContain('1.000001');
    expect(await balanceOf(accountId)).toBe(1_000_000);
    expect(await store.listLedger(accountId)).toHaveLength(1);
    expect(await store.latestChangeId()).toBe(before);

    // Exactly everything is allowed.
    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '--amount=-1', '--reason', 'close')).toMatchObject({ balance_micros: 0 });
    expect((await run('credits', 'adjust', accountId, '--reason', 'zero', '--', '0')).code).toBe(1);
  });

  it('takes a bare negative amount as the amount, wherever it stands', async () => {
    const accountId = await newAccount();
    await runJson('credits', 'grant', accountId, '10', '--reason', 'start');
    expect(await runJson<EntryJson>('credits', 'adjust', accountId, '-5', '--reason', 'r')).toMatchObject({ amount_micros: -5_000_000, balance: '5' });
    expect(await runJson<EntryJson>('credits', 'adjust', '--reason', 'r', accountId, '-.5')).toMatchObject({ amount_micros: -500_000, balance: '4.5' });
    // Two amounts are still one too many.
    const twice = await run('credits', 'adjust', accountId, '-1', '-2', '--reason', 'r');
    expect(twice.code).toBe(1);
    expect(await balanceOf(accountId)).toBe(4_500_000);
  });

  it('prints the ledger newest first with formatted amounts and the balance, as text and JSON', async () => {
    const accountId = await newAccount();
    await runJson('credits', 'grant', accountId, '10', '--reason', 'first');
    await runJson('credits', 'adjust', accountId, '--reason', 'second', '--', '-0.25');
    await runJson('credits', 'grant', accountId, '0.000001', '--reason', 'third');

    const text = await run('credits', 'ledger', 'ada@example.com');
    expect(text.code).toBe(0);
    expect(text.out[0]!.split(/\s+/)).toEqual(['id', 'created_at', 'kind', 'amount', 'reason', 'reference']);
    const rows = text.out.slice(1, 4).map((line) => line.split(/\s+/));
    expect(rows.map((r) => [r[2], r[3], r[4]])).toEqual([
      ['grant', '0.000001', 'third'],
      ['adjustment', '-0.25', 'second'],
      ['grant', '10', 'first'],
    ]);
    expect(text.out.at(-1)).toBe('balance  9.750001 credits (9750001 micros)');

    const json = await runJson<LedgerJson>('credits', 'ledger', accountId);
    expect(json).toMatchObject({ account_id: accountId, email: 'ada@example.com', balance: '9.750001', balance_micros: 9_750_001 });
    expect(json.entries.map((e) => e.amount_micros)).toEqual([1, -250_000, 10_000_000]);
    expect(json.entries.map((e) => e.id)).toEqual((await store.listLedger(accountId)).map((e) => e.id));

    const limited = await run('credits', 'ledger', accountId, '--limit', '2');
    expect(limited.out.slice(1, 3).map((line) => line.split(/\s+/)[4])).toEqual(['third', 'second']);
    expect(limited.stdout).toContain('newest 2 entries');
    expect((await runJson<LedgerJson>('credits', 'ledger', accountId, '--limit', '1')).entries).toHaveLength(1);
    expect((await run('credits', 'ledger', accountId, '--limit', '0')).code).toBe(1);
    expect((await run('credits', 'ledger', accountId, '--limit', 'many')).code).toBe(1);
  });

  it('prints an empty ledger with a zero balance', async () => {
    const accountId = await newAccount();
    const text = await run('credits', 'ledger', accountId);
    expect(text.code).toBe(0);
    expect(text.out).toEqual(['id  created_at  kind  amount  reason  reference', '', 'balance  0 credits (0 micros)']);
  });

  it('fails with exit 1 for an unknown account or subcommand', async () => {
    for (const argv of [
      ['credits', 'grant', 'ghost@example.com', '5', '--reason', 'r'],
      ['credits', 'adjust', 'acct_00000000000000000000', '5', '--reason', 'r'],
      ['credits', 'ledger', 'ghost@example.com'],
    ]) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr).toContain('no account');
    }
    expect((await run('credits', 'steal', 'x')).code).toBe(1);
    expect((await run('credits')).code).toBe(1);
  });

  it('creates an account with initial credits as a grant, and shows its balance', async () => {
    const created = await runJson<{ id: string; balance: string; balance_micros: number }>(
      'accounts', 'create', '--email', 'bob@example.com', '--credits', '25.5',
    );
    expect(created).toMatchObject({ balance: '25.5', balance_micros: 25_500_000 });
    expect(await balanceOf(created.id)).toBe(25_500_000);
    expect(await store.listLedger(created.id)).toMatchObject([{ kind: 'grant', amountMicros: 25_500_000, reason: 'initial credits' }]);

    const shown = await runJson<{ id: string; balance: string; balance_micros: number }>('accounts', 'show', 'bob@example.com');
    expect(shown).toMatchObject({ id: created.id, balance: '25.5', balance_micros: 25_500_000 });
    const text = await run('accounts', 'show', created.id);
    expect(text.stdout).toMatch(/^balance\s+25\.5$/m);
    expect(text.stdout).toMatch(/^balance_micros\s+25500000$/m);

    const without = await runJson<{ id: string; balance_micros: number }>('accounts', 'create', '--email', 'carol@example.com');
    expect(without.balance_micros).toBe(0);
    expect(await store.listLedger(without.id)).toEqual([]);
  });

  it('refuses to create an account with invalid initial credits, creating nothing', async () => {
    for (const credits of ['0', '-5', 'lots', '1.0000001']) {
      const result = await run('accounts', 'create', '--email', 'dan@example.com', '--credits', credits);
      expect(result.code, credits).toBe(1);
      expect(result.stderr).toContain('--credits');
    }
    expect(await store.listAccounts()).toEqual([]);
  });

  it('lists the credits commands in the usage text', async () => {
    expect((await run('--help')).stdout).toContain('credits grant | adjust | ledger');
    const help = await run('credits', '--help');
    expect(help.stdout).toContain('credits grant A N --reason R');
    expect(help.stdout).toContain('credits adjust A ±N --reason R');
    expect(help.stdout).toContain('credits ledger A');
    expect((await run('help', 'credits', 'adjust')).stdout).toContain('adjust A -5 --reason R');
    expect((await run('codes', 'create', '--help')).stdout).toContain('--credits N');
  });
});

describe('lmgate credits on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'lmgate-credits-pg-'));
  });

  afterEach(async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await database.drop();
  });

  it('grants, adjusts, refuses going below zero and prints the ledger in the database named by DATABASE_URL', async () => {
    const configFile = join(dataDir, 'lmgate.yaml');
    writeFileSync(configFile, '');
    const { run, runJson } = runner({ DATABASE_URL: database.url, LMGATE_DATA_DIR: dataDir, LMGATE_CONFIG: configFile });

    const account = await runJson<{ id: string; balance_micros: number }>('accounts', 'create', '--email', 'pat@example.com', '--credits', '5');
    expect(account.balance_micros).toBe(5_000_000);
    expect(await runJson<EntryJson>('credits', 'grant', 'pat@example.com', '2.000001', '--reason', 'promo')).toMatchObject({ balance_micros: 7_000_001 });
    expect(await runJson<EntryJson>('credits', 'adjust', account.id, '--amount', '-7', '--reason', 'r')).toMatchObject({ balance: '0.000001' });

    const refused = await run('credits', 'adjust', account.id, '--reason', 'r', '--', '-0.000002');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('below zero');

    const ledger = await runJson<LedgerJson>('credits', 'ledger', account.id);
    expect(ledger.balance_micros).toBe(1);
    expect(ledger.entries.map((e) => [e.kind, e.amount])).toEqual([
      ['adjustment', '-7'],
      ['grant', '2.000001'],
      ['grant', '5'],
    ]);

    const store = openStore({ databaseUrl: database.url, sqlitePath: join(dataDir, 'unused.db') });
    try {
      expect(store.dialect).toBe('postgres');
      expect(await store.balanceOf(account.id)).toBe(1);
      expect(await store.sumLedger(account.id)).toBe(1);
    } finally {
      await store.close();
    }
  });
});
