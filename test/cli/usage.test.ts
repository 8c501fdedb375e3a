// `lmgate usage export | verify` through main(argv, io, env), on SQLite and on PostgreSQL:
// what is exported equals what was written, its filters and period, its memory staying flat
// over 200,000 records, and the check of the rollups against a planted difference.
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_CSV_HEADER } from '../../src/billing/usage-csv.js';
import { main } from '../../src/cli/main.js';
import { newTimeOrderedId } from '../../src/ids.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { cliDataDir, runCli, type Run } from '../helpers/cli-run.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];

interface Setup {
  env: NodeJS.ProcessEnv;
  store: Store;
  /** Runs one SQL statement on the database, beside the store. */
  rawSql(statement: string): Promise<void>;
  close(): Promise<void>;
}

interface Seeded {
  records: UsageRecord[];
  ada: { id: string; keyId: string };
  bob: { id: string; keyId: string };
  org: { id: string; keyId: string };
}

const BACKENDS: { name: string; open(): Promise<Setup> }[] = [
  {
    name: 'SQLite',
    open: async () => {
      const dir = cliDataDir('lmgate-usage-cli-');
      const path = join(dir.dataDir, 'lmgate.db');
      const store = openStore({ sqlitePath: path });
      await store.migrate();
      return {
        env: dir.env,
        store,
        rawSql: async (statement) => {
          const db = new Database(path);
          try {
            db.exec(statement);
          } finally {
            db.close();
          }
        },
        close: async () => {
          await store.close();
          dir.remove();
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    open: async () => {
      const dir = cliDataDir('lmgate-usage-cli-pg-');
      const database = await createTestDatabase();
      const store = openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent/never-used.db' });
      await store.migrate();
      return {
        env: { ...dir.env, DATABASE_URL: database.url },
        store,
        rawSql: async (statement) => {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          try {
            await client.query(statement);
          } finally {
            await client.end();
          }
        },
        close: async () => {
          await store.close();
          await database.drop();
          dir.remove();
        },
      };
    },
  },
];

/** A record of `accountId`'s key at `createdAt`, with a cost that tells records apart. */
function record(accountId: string, keyId: string, createdAt: string, costMicros: number, memberId: string | null = null): UsageRecord {
  return {
    id: newTimeOrderedId('usage'),
    requestId: `req_${costMicros}`,
    accountId,
    keyId,
    memberId,
    model: 'test-model',
    promptTokens: 10,
    completionTokens: 5,
    ...PLAIN_USAGE,
    costMicros,
    latencyMs: 3,
    status: 200,
    streamed: costMicros % 2 === 0,
    finishReason: 'stop',
    createdAt,
  };
}

/** Oldest first, as an export reads them. */
function byTime(records: UsageRecord[]): UsageRecord[] {
  return [...records].sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
}

async function seed(setup: Setup): Promise<Seeded> {
  const run = async (...argv: string[]): Promise<Record<string, unknown>> => {
    const result = await runCli(setup.env, [...argv, '--json']);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const person = async (email: string, keyName: string) => {
    const account = await run('accounts', 'create', '--email', email, '--credits', '1000');
    const key = await run('keys', 'create', email, '--name', keyName);
    return { id: String(account.id), keyId: String(key.id) };
  };
  const ada = await person('ada@example.test', 'laptop');
  const bob = await person('bob@example.test', '=SUM(A1)');
  const org = await run('orgs', 'create', 'Acme', '--owner', 'ada@example.test');
  const orgKey = await run('keys', 'create', '--org', 'Acme', '--member', 'ada@example.test', '--name', 'team, "shared"');
  const acme = { id: String(org.id), keyId: String(orgKey.id) };
  const records: UsageRecord[] = [];
  let cost = 1;
  for (const day of DAYS) {
    for (let i = 0; i < 80; i++) {
      // Several records share an instant, so the order within one is by id.
      const at = `${day}T${String(i % 24).padStart(2, '0')}:00:00.000Z`;
      const [owner, memberId] = i % 3 === 0 ? [ada, null] : i % 3 === 1 ? [bob, null] : [acme, ada.id];
      records.push(record(owner.id, owner.keyId, at, cost++, memberId));
    }
  }
  // Just outside the period on both sides.
  records.push(record(ada.id, ada.keyId, '2026-02-28T23:59:59.999Z', 9_001), record(ada.id, ada.keyId, '2026-03-05T00:00:00.000Z', 9_002));
  await setup.store.recordUsage(records);
  return { records: records.filter((r) => r.costMicros < 9_000), ada, bob, org: acme };
}

/** Quoted CSV fields, with commas and doubled quotes inside, as RFC 4180 has them. */
function parseCsv(text: string): string[][] {
  return text
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].slice(0, -1).map((m) => m[1]!.replace(/^"(.*)"$/s, '$1').replace(/""/g, '"')));
}

// The heap that is still reachable, not the garbage a young generation happens to hold:
// without a collection first, heapUsed measures the collector's timing, not a leak.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

function liveHeapMb(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

for (const backend of BACKENDS) {
  describe(`lmgate usage on ${backend.name}`, () => {
    let setup: Setup;
    let seeded: Seeded;
    const run = (...argv: string[]): Promise<Run> => runCli(setup.env, argv);

    beforeAll(async () => {
      setup = await backend.open();
      seeded = await seed(setup);
    });
    afterAll(async () => setup.close());

    it('exports every record of the period as CSV, oldest first, with the dashboard’s columns and whose each is', async () => {
      const result = await run('usage', 'export', '--from', DAYS[0]!, '--to', DAYS.at(-1)!);
      expect(result.code, result.stderr).toBe(0);
      const [header, ...rows] = parseCsv(`${result.stdout}\n`);
      expect(header!.join(',')).toBe(`${USAGE_CSV_HEADER},id,account_id,member_id`);
      const column = (name: string) => header!.indexOf(name);
      const expected = byTime(seeded.records);
      expect(rows.map((row) => row[column('id')])).toEqual(expected.map((r) => r.id));
      expect(rows.map((row) => Math.round(Number(row[column('cost_credits')]) * 1e6))).toEqual(expected.map((r) => r.costMicros));
      expect(rows.map((row) => row[column('account_id')])).toEqual(expected.map((r) => r.accountId));
      expect(rows.map((row) => row[column('created_at')])).toEqual(expected.map((r) => r.createdAt));
      const names = new Set(rows.map((row) => row[column('key_name')]));
      // A name a spreadsheet would run as a formula is defused; one with a comma and quotes is quoted.
      expect(names).toEqual(new Set(['laptop', "'=SUM(A1)", 'team, "shared"']));
      expect(result.stdout).toContain(`"team, ""shared"""`);
      expect(rows.filter((row) => row[column('member_id')] === seeded.ada.id)).toHaveLength(expected.filter((r) => r.memberId !== null).length);
    });

    it('exports JSON lines, one object per record, equal to what was written', async () => {
      const result = await run('usage', 'export', '--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--format', 'jsonl');
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
      const expected = byTime(seeded.records);
      expect(lines).toHaveLength(expected.length);
      expect(lines.map((line) => [line.id, line.cost_micros, line.account_id, line.created_at])).toEqual(expected.map((r) => [r.id, r.costMicros, r.accountId, r.createdAt]));
      expect(lines[0]).toEqual({
        id: expected[0]!.id,
        created_at: expected[0]!.createdAt,
        request_id: expected[0]!.requestId,
        account_id: expected[0]!.accountId,
        member_id: expected[0]!.memberId,
        key_id: expected[0]!.keyId,
        key_name: expect.any(String),
        model: 'test-model',
        prompt_tokens: 10,
        completion_tokens: 5,
        cached_tokens: 0,
        cache_write_tokens: 0,
        cache_write_1h_tokens: 0,
        reasoning_tokens: 0,
        basis: 'reported',
        outcome: 'completed',
        cost_micros: expected[0]!.costMicros,
        shortfall_micros: 0,
        held_micros: 0,
        latency_ms: 3,
        status: 200,
        streamed: expected[0]!.streamed,
        finish_reason: 'stop',
      });
    });

    it('exports one account’s (by email) or one organisation’s (by name) records, and a period given by timestamps', async () => {
      const ids = async (...argv: string[]): Promise<string[]> => {
        const result = await run('usage', 'export', '--format', 'jsonl', ...argv);
        expect(result.code, result.stderr).toBe(0);
        return result.stdout === '' ? [] : result.stdout.split('\n').map((line) => String((JSON.parse(line) as { id: string }).id));
      };
      const of = (accountId: string, records = seeded.records) => byTime(records.filter((r) => r.accountId === accountId)).map((r) => r.id);
      expect(await ids('--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--account', 'bob@example.test')).toEqual(of(seeded.bob.id));
      expect(await ids('--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--account', seeded.ada.id)).toEqual(of(seeded.ada.id));
      expect(await ids('--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--org', 'Acme')).toEqual(of(seeded.org.id));
      // One day, --to included; then from 10:00 up to (not including) 12:00 of the second day.
      const second = seeded.records.filter((r) => r.createdAt.startsWith(DAYS[1]!));
      expect(await ids('--from', DAYS[1]!, '--to', DAYS[1]!, '--org', seeded.org.id)).toEqual(of(seeded.org.id, second));
      const window = second.filter((r) => r.createdAt >= `${DAYS[1]}T10:00` && r.createdAt < `${DAYS[1]}T12:00`);
      expect(window.length).toBeGreaterThan(0);
      expect(await ids('--from', `${DAYS[1]}T12:00:00+02:00`, '--to', `${DAYS[1]}T12:00:00Z`)).toEqual(byTime(window).map((r) => r.id));
      expect(await ids('--from', '2020-01-01', '--to', '2020-01-31')).toEqual([]);
    });

    it('the store reads page after page in either order, ties within an instant broken by id, filtered by account and member', async () => {
      const range = { fromIso: `${DAYS[0]}T00:00:00.000Z`, untilIso: '2026-03-05T00:00:00.000Z' };
      const read = async (query: Partial<Parameters<Store['exportUsage']>[0]>): Promise<string[]> => {
        const ids: string[] = [];
        for await (const usage of setup.store.exportUsage({ ...range, pageSize: 7, ...query })) ids.push(usage.id);
        return ids;
      };
      const oldestFirst = byTime(seeded.records).map((r) => r.id);
      expect(await read({})).toEqual(oldestFirst);
      expect(await read({ newestFirst: true })).toEqual([...oldestFirst].reverse());
      const orgs = byTime(seeded.records.filter((r) => r.accountId === seeded.org.id)).map((r) => r.id);
      expect(await read({ accountId: seeded.org.id, memberId: seeded.ada.id, newestFirst: true })).toEqual([...orgs].reverse());
      expect(await read({ accountId: seeded.org.id, memberId: seeded.bob.id })).toEqual([]);
      // A page size that divides the records exactly ends with one empty read, not a repeat.
      expect(await read({ pageSize: seeded.records.length / 4 })).toEqual(oldestFirst);
    });

    it('refuses a period, a format or an owner it cannot use, in one line each', async () => {
      const cases: [string[], RegExp][] = [
        [['usage', 'export', '--to', DAYS[0]!], /give the period with --from DATE --to DATE/],
        [['usage', 'export', '--from', 'yesterday', '--to', DAYS[0]!], /--from: "yesterday" is not a date \(YYYY-MM-DD, UTC\)/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', '2026-02-30'], /--to: "2026-02-30" is not a date/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', '2026-03-04T10:00:00'], /--to: .* with a zone/],
        [['usage', 'export', '--from', DAYS[1]!, '--to', DAYS[0]!], /--from 2026-03-02 is not before --to 2026-03-01/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', DAYS[0]!, '--format', 'xml'], /--format: expected csv or jsonl/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', DAYS[0]!, '--account', 'nobody@example.test'], /no account "nobody@example\.test"/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', DAYS[0]!, '--org', 'Nope'], /no organisation "Nope"/],
        [['usage', 'export', '--from', DAYS[0]!, '--to', DAYS[0]!, '--org', 'Acme', '--account', 'bob@example.test'], /--account or --org, not both/],
        [['usage', 'verify', '--from', DAYS[0]!], /give the period/],
        [['usage', 'tally'], /expected export or verify/],
      ];
      for (const [argv, message] of cases) {
        const result = await run(...argv);
        expect(result.code, argv.join(' ')).toBe(1);
        expect(result.out).toEqual([]);
        expect(result.err).toHaveLength(1);
        expect(result.stderr).toMatch(message);
      }
    });

    it('verify finds nothing on data written through the store, and exits 1 naming a planted difference', async () => {
      const clean = await run('usage', 'verify', '--from', DAYS[0]!, '--to', DAYS.at(-1)!);
      expect(clean.stderr).toBe('');
      expect(clean).toMatchObject({ code: 0, out: ['usage verify: rollups, records and ledger agree for 2026-03-01T00:00:00.000Z..2026-03-05T00:00:00.000Z'] });
      expect(await run('usage', 'verify', '--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--json')).toMatchObject({ code: 0, out: ['[]'] });

      const planted = seeded.records.find((r) => r.accountId === seeded.bob.id && r.createdAt.startsWith(DAYS[2]!))!;
      await setup.rawSql(`update usage_daily set cost_micros = cost_micros + 1 where account_id = '${seeded.bob.id}' and key_id = '${planted.keyId}' and day = '${DAYS[2]}'`);
      const found = await run('usage', 'verify', '--from', DAYS[0]!, '--to', DAYS.at(-1)!);
      expect(found.code).toBe(1);
      expect(found.out[0]).toMatch(/^kind\s+day\s+account\s+group\s+field\s+expected\s+actual$/);
      expect(found.stdout).toMatch(new RegExp(`rollup\\s+${DAYS[2]}\\s+${seeded.bob.id}\\s+.*cost_?micros`, 'i'));
      const json = await run('usage', 'verify', '--from', DAYS[0]!, '--to', DAYS.at(-1)!, '--json');
      expect(json.code).toBe(1);
      const differences = JSON.parse(json.stdout) as { kind: string; day: string; accountId: string; expected: number; actual: number }[];
      expect(differences).toContainEqual(expect.objectContaining({ kind: 'rollup', day: DAYS[2], accountId: seeded.bob.id }));
      const difference = differences.find((d) => d.kind === 'rollup' && d.accountId === seeded.bob.id)!;
      expect(difference.actual - difference.expected).toBe(1);
      // The rollup across accounts of that day now differs from it, by as much.
      const acrossAccounts = differences.find((d) => d.kind === 'rollup' && d.accountId === '')!;
      expect(acrossAccounts).toMatchObject({ day: DAYS[2] });
      expect(acrossAccounts.expected - acrossAccounts.actual).toBe(1);
      // Outside the planted day, still nothing.
      expect(await run('usage', 'verify', '--from', DAYS[0]!, '--to', DAYS[1]!)).toMatchObject({ code: 0 });
    });

    it('exports 200,000 records with the heap flat: a page at a time, through stdout with backpressure', { timeout: 600_000 }, async () => {
      const { store } = setup;
      const account = seeded.bob;
      const total = 200_000;
      const startMs = Date.parse('2026-06-01T00:00:00.000Z');
      for (let batch = 0; batch < total / 1_000; batch++) {
        const records: UsageRecord[] = [];
        // 43 records per second of one day and the next, many of them sharing an instant.
        for (let i = 0; i < 1_000; i++) records.push(record(account.id, account.keyId, new Date(startMs + Math.floor((batch * 1_000 + i) / 43) * 1_000).toISOString(), 1 + i));
        await store.recordUsage(records);
      }

      // The store's own iteration, with a small page.
      const before = liveHeapMb();
      let peak = before;
      let count = 0;
      let previous = '';
      for await (const usage of store.exportUsage({ fromIso: '2026-06-01T00:00:00.000Z', untilIso: '2026-06-04T00:00:00.000Z', pageSize: 500 })) {
        const key = `${usage.createdAt} ${usage.id}`;
        expect(key > previous).toBe(true);
        previous = key;
        if (++count % 10_000 === 0) peak = Math.max(peak, liveHeapMb());
      }
      expect(count).toBe(total);
      const storeGrowthMb = peak - before;

      // The command, into a slow reader: every write waits for the reader to take it.
      const cliBefore = liveHeapMb();
      let cliPeak = cliBefore;
      let lines = 0;
      const io = {
        out: () => expect.unreachable('an export writes through write()'),
        err: (line: string) => expect.unreachable(line),
        write: async (chunk: string) => {
          const before = lines;
          lines += chunk.split('\n').length - 1;
          if (Math.floor(lines / 10_000) > Math.floor(before / 10_000)) cliPeak = Math.max(cliPeak, liveHeapMb());
          await new Promise((resolve) => setImmediate(resolve));
        },
      };
      expect(await main(['usage', 'export', '--from', '2026-06-01', '--to', '2026-06-03', '--account', 'bob@example.test', '--format', 'jsonl'], io, setup.env)).toBe(0);
      expect(lines).toBe(total);
      const cliGrowthMb = cliPeak - cliBefore;

      // What the measure would show for an export that held its records: the bound means something.
      const heldBefore = liveHeapMb();
      const held: UsageRecord[] = [];
      for await (const usage of store.exportUsage({ fromIso: '2026-06-01T00:00:00.000Z', untilIso: '2026-06-04T00:00:00.000Z' })) held.push(usage);
      const heldMb = liveHeapMb() - heldBefore;
      expect(held).toHaveLength(total);
      console.info(
        `${backend.name}: ${total} records exported, live heap growth ${storeGrowthMb.toFixed(1)} MB (store, pages of 500), ` +
          `${cliGrowthMb.toFixed(1)} MB (CLI, jsonl, pages of 5,000); holding them all: ${heldMb.toFixed(1)} MB`,
      );
      // Holding them takes about 95 MB; one page of records a few MB (the CLI's also counts
      // the store it opens).
      expect(heldMb).toBeGreaterThan(60);
      expect(storeGrowthMb).toBeLessThan(20);
      expect(cliGrowthMb).toBeLessThan(20);
    });
  });
}

describe('lmgate usage help', () => {
  it('documents export and verify, --to included', async () => {
    const dir = cliDataDir('lmgate-usage-help-');
    try {
      const exportHelp = await runCli(dir.env, ['usage', 'export', '--help']);
      expect(exportHelp.code).toBe(0);
      expect(exportHelp.out[0]).toMatch(/^usage: lmgate usage export --from DATE --to DATE/);
      expect(exportHelp.stdout).toContain('--to includes that whole day');
      const verifyHelp = await runCli(dir.env, ['help', 'usage', 'verify']);
      expect(verifyHelp.out[0]).toMatch(/^usage: lmgate usage verify --from DATE --to DATE/);
      expect((await runCli(dir.env, ['help'])).stdout).toContain('usage export | verify');
    } finally {
      dir.remove();
    }
  });
});
