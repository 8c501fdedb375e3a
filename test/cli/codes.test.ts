// `lmgate codes create | list`, driven through main(argv, io, env) against a SQLite file,
// and once against PostgreSQL; the codes it prints redeem through the store.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashRedemptionCode } from '../../src/billing/redemption-code.js';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

const CODE = /^LMG-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}$/;

interface CodeJson {
  id: string;
  code?: string;
  amount: string;
  amount_micros: number;
  expires_at: string | null;
  expires: string;
  created_at: string;
  redeemed_by: string | null;
  redeemed_at: string | null;
}

function runner(env: NodeJS.ProcessEnv) {
  async function run(...argv: string[]): Promise<{ code: number; out: string[]; stdout: string; stderr: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(argv, { out: (line) => out.push(line), err: (line) => err.push(line) }, env);
    return { code, out, stdout: out.join('\n'), stderr: err.join('\n') };
  }
  async function runJson<T>(...argv: string[]): Promise<T> {
    const result = await run(...argv, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toHaveLength(1);
    return JSON.parse(result.out[0]!) as T;
  }
  return { run, runJson };
}

describe('lmgate codes on SQLite', () => {
  let dataDir: string;
  let store: Store;
  let run: ReturnType<typeof runner>['run'];
  let runJson: ReturnType<typeof runner>['runJson'];

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'lmgate-codes-'));
    const configFile = join(dataDir, 'lmgate.yaml');
    writeFileSync(configFile, '');
    ({ run, runJson } = runner({ LMGATE_DATA_DIR: dataDir, LMGATE_CONFIG: configFile }));
    store = openStore({ sqlitePath: join(dataDir, 'lmgate.db') });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('create prints K distinct codes once; the store keeps only their hashes, and they redeem', async () => {
    const created = await runJson<CodeJson[]>('codes', 'create', '--credits', '2.5', '--count', '3');
    expect(created).toHaveLength(3);
    for (const row of created) {
      expect(row.code).toMatch(CODE);
      expect(row).toMatchObject({ amount: '2.5', amount_micros: 2_500_000, expires_at: null, redeemed_by: null });
    }
    expect(new Set(created.map((row) => row.code)).size).toBe(3);

    await store.migrate();
    const account = await store.createAccount({ email: 'redeemer@example.test', tier: 'free' });
    const outcome = await store.redeemCode(account.id, hashRedemptionCode(created[1]!.code!), new Date().toISOString());
    expect(outcome).toEqual({ outcome: 'redeemed', codeId: created[1]!.id, amountMicros: 2_500_000, balanceMicros: 2_500_000 });

    const listed = await run('codes', 'list', '--json');
    expect(listed.code).toBe(0);
    for (const row of created) expect(listed.stdout).not.toContain(row.code!);
    const rows = JSON.parse(listed.stdout) as CodeJson[];
    expect(rows.map((row) => row.id).sort()).toEqual(created.map((row) => row.id).sort());
    expect(rows.find((row) => row.id === created[1]!.id)).toMatchObject({ redeemed_by: account.id, redeemed_at: expect.any(String) });
    expect(rows.filter((row) => row.redeemed_by === null)).toHaveLength(2);
  });

  it('create without --json prints the code and says it is shown once; list tells the codes apart by their last characters', async () => {
    const created = await run('codes', 'create', '--credits', '1', '--expires', '2099-12-31');
    expect(created.code).toBe(0);
    const code = created.stdout.match(/LMG-\S+/)![0];
    expect(code).toMatch(CODE);
    expect(created.stdout).toContain('shown once');
    expect(created.stdout).toContain('end of 2099-12-31 UTC');
    expect(created.stdout).not.toContain('2100-01-01');
    await run('codes', 'create', '--credits', '2');
    const listed = await run('codes', 'list');
    expect(listed.out[0]).toMatch(/^hint\s+amount\s+expires\s+created_at\s+redeemed_by\s+redeemed_at\s+disabled_at\s+id$/);
    expect(listed.out).toHaveLength(3);
    expect(listed.stdout).not.toContain(code);
    const row = listed.out.find((line) => line.startsWith(`LMG-…-${code.slice(-4)} `));
    expect(row).toContain('end of 2099-12-31 UTC');
    expect(listed.out.some((line) => / 2 +never /.test(line))).toBe(true);
  });

  it('--expires takes a day (valid through its end, UTC) or an ISO time', async () => {
    const [byDay] = await runJson<CodeJson[]>('codes', 'create', '--credits', '1', '--expires', '2099-06-30');
    expect(byDay!.expires_at).toBe('2099-07-01T00:00:00.000Z');
    expect(byDay!.expires).toBe('end of 2099-06-30 UTC');
    const [byTime] = await runJson<CodeJson[]>('codes', 'create', '--credits', '1', '--expires', '2099-06-30T12:00:00Z');
    expect(byTime!.expires_at).toBe('2099-06-30T12:00:00.000Z');
    expect(byTime!.expires).toBe('2099-06-30T12:00:00.000Z');
  });

  it.each([
    [['codes', 'create'], /needs an amount of credits/],
    [['codes', 'create', '--credits', '0'], /must not be zero/],
    [['codes', 'create', '--credits', '-1'], /more than zero|not an amount/],
    [['codes', 'create', '--credits', '1', '--count', '0'], /--count must be/],
    [['codes', 'create', '--credits', '1', '--count', '1001'], /--count must be/],
    [['codes', 'create', '--credits', '1', '--expires', '2020-01-01'], /already past/],
    [['codes', 'create', '--credits', '1', '--expires', '2099-02-30'], /not a date/],
    [['codes', 'frobnicate'], /expected create, list or disable/],
  ])('refuses %j with a message and exit 1', async (argv, message) => {
    const result = await run(...argv);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

describe('lmgate codes on PostgreSQL', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeEach(async () => {
    database = await createTestDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'lmgate-codes-pg-'));
  });

  afterEach(async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates and lists codes through DATABASE_URL', async () => {
    const configFile = join(dataDir, 'lmgate.yaml');
    writeFileSync(configFile, '');
    const { runJson } = runner({ LMGATE_CONFIG: configFile, LMGATE_DATA_DIR: dataDir, DATABASE_URL: database.url });
    const created = await runJson<CodeJson[]>('codes', 'create', '--credits', '7', '--count', '2');
    expect(created.map((row) => row.code)).toEqual([expect.stringMatching(CODE), expect.stringMatching(CODE)]);
    const listed = await runJson<CodeJson[]>('codes', 'list');
    expect(listed.map((row) => row.amount_micros)).toEqual([7_000_000, 7_000_000]);
    expect(listed.map((row) => row.id).sort()).toEqual(created.map((row) => row.id).sort());
  });
});
