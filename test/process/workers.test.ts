// `serve --workers N` in shared mode, as processes: the workers share the port, a worker
// killed with -9 in the middle of 100 streams leaves no reservation or slot behind once its
// leases run out, every charge it settled reaches the store once, and the supervisor starts
// another worker. SIGTERM drains them all and exits 0.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { jsonOf } from '../helpers/json.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { TEST_REDIS_URL, testRedis, type TestRedis } from '../helpers/redis.js';
import { startServer } from '../helpers/server-process.js';

const LEASE_SECONDS = 3;
const START_MICROS = 1_000_000_000;
const dataDir = mkdtempSync(join(tmpdir(), 'lmgate-workers-'));
let database: TestDatabase;
let redis: TestRedis;
let store: Store;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  redis = testRedis();
  env = { LMGATE_CONFIG: join(dataDir, 'lmgate.yaml'), LMGATE_DATA_DIR: dataDir, DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL };
  writeFileSync(
    join(dataDir, 'lmgate.yaml'),
    [
      'log: { level: warn }',
      `redis: { key_prefix: ${redis.prefix}, lease_seconds: ${LEASE_SECONDS} }`,
      'server: { drain_seconds: 1 }',
      `demo: { seed_account: true, credits: ${START_MICROS / 1_000_000} }`,
      'models:',
      '  priced-echo: { backend: demo, kind: echo, tokens_per_sec: 0, price: { input: 1000, output: 1000 } }',
      '  slow-lorem: { backend: demo, kind: lorem, tokens_per_sec: 20, price: { input: 1000, output: 1000 } }',
      'tiers:',
      '  free: { rpm: 100000, tpm: 1000000000, concurrency: 1000, models: ["*"] }',
    ].join('\n'),
  );
  store = openStore({ databaseUrl: database.url, sqlitePath: '/nonexistent' });
});

afterAll(async () => {
  await store.close();
  await redis.cleanup();
  await database.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function workerPids(supervisor: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(supervisor), '-f', 'main.ts serve']).toString().trim().split('\n').map(Number);
  } catch {
    return [];
  }
}

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('serve --workers', () => {
  it('is refused without shared mode, with the reason', async () => {
    const errors: string[] = [];
    const code = await main(['serve', '--workers', '2'], { out: () => undefined, err: (line) => errors.push(line) }, { LMGATE_DATA_DIR: dataDir });
    expect(code).toBe(1);
    expect(errors.join('\n')).toMatch(/server\.workers.*more than one worker needs shared mode/s);
  });

  it('survives a worker killed with -9 in the middle of 100 streams: its leases run out, its settled charges are stored once', async () => {
    const server = await startServer(env, /sk-lmg-[0-9A-Za-z]{49}\n/, ['--workers', '2']);
    expect(server.output().match(/listening on/g)).toHaveLength(1);
    await until(() => workerPids(server.child.pid!).length === 2, 5_000);
    const apiKey = /sk-lmg-[0-9A-Za-z]+/.exec(server.output())![0];
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const post = (body: object): Promise<Response> =>
      fetch(`${server.origin}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }) });

    // Settled charges on both workers, then 100 streams (5 s each) spread over them.
    let answered = 0;
    for (let i = 0; i < 50; i++) if ((await post({ model: 'priced-echo' })).status === 200) answered++;
    const streams = Array.from({ length: 100 }, () =>
      post({ model: 'slow-lorem', stream: true, max_tokens: 100 }).then(
        async (res) => ({ status: res.status, text: await res.text().catch(() => 'cut') }),
        () => ({ status: 0, text: 'cut' }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const [victim] = workerPids(server.child.pid!);
    process.kill(victim!, 'SIGKILL');
    const ended = await Promise.all(streams);
    // Some streams were cut with the worker; the rest finished on the other.
    expect(ended.filter((stream) => stream.text.endsWith('data: [DONE]\n\n')).length).toBeGreaterThan(0);
    expect(ended.filter((stream) => !stream.text.endsWith('data: [DONE]\n\n')).length).toBeGreaterThan(0);

    // The supervisor started another worker.
    await until(() => /worker \d+ listening/.test(server.output()), 20_000);
    expect(workerPids(server.child.pid!).filter((pid) => pid !== victim)).toHaveLength(2);

    // Within the lease (and the claim of the dead worker's stream entries), nothing of it is
    // left, and the available balance is the store's again. (A settlement whose reply came
    // too late under load is retried a second later: its second copy counts as pending
    // until it too is acknowledged, so "whole again" is waited for, not read once.)
    const account = (await store.listAccounts())[0]!;
    const keys = { leases: `${redis.prefix}:${account.id}:leases`, slots: `${redis.prefix}:${account.id}:slots` };
    const admin = redis.connect();
    const stream = `${redis.prefix}:usage`;
    await until(async () => {
      const billing = await jsonOf(await fetch(`${server.origin}/api/billing/subscription`, { headers }));
      const pending = (await admin.xpending(stream, 'store-writers')) as [number, ...unknown[]];
      const left = [billing.reserved.micros, await admin.zcard(keys.leases), await admin.zcard(keys.slots), pending[0]];
      return left.every((n) => n === 0) && billing.available.micros === (await store.balanceOf(account.id));
    }, 3 * LEASE_SECONDS * 1000 + 10_000);

    const usage = await store.listUsage(account.id, { limit: 100_000 });
    expect(new Set(usage.map((record) => record.id)).size).toBe(usage.length);
    expect(new Set(usage.map((record) => record.requestId)).size).toBe(usage.length);
    expect(usage.filter((record) => record.model === 'priced-echo' && record.status === 200)).toHaveLength(answered);
    const balance = await store.balanceOf(account.id);
    expect(balance).toBe(START_MICROS - usage.reduce((sum, record) => sum + record.costMicros, 0));
    expect(await store.sumLedger(account.id)).toBe(balance);
    const billing = await jsonOf(await fetch(`${server.origin}/api/billing/subscription`, { headers }));
    expect(billing.available.micros).toBe(balance);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(workerPids(server.child.pid!)).toEqual([]);
  }, 60_000);
});
