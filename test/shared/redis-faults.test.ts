// Redis faults that must cost nothing, against a redis-server of this suite's own (never the
// shared one): stalled (SIGSTOP) under load, admissions that timed out must not hold credits
// once it resumes; killed and started again empty, usage must keep reaching the store, and
// what was settled during the outage with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTAGE_LOAD, startCluster, type TestCluster } from '../helpers/start-cluster.js';

const INSTANCES = 2;
const START_MICROS = 50_000_000;
let port: number;
let redis: ChildProcess;
let cluster: TestCluster;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: chosen } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return chosen;
}

/** A redis-server with nothing saved, resolved once it accepts connections. */
async function startRedis(): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  port = await freePort();
  redis = await startRedis();
  cluster = await startCluster(
    INSTANCES,
    OUTAGE_LOAD,
    { redisUrl: `redis://127.0.0.1:${port}` },
  );
}, 60_000);
afterAll(async () => {
  await cluster?.close();
  if (redis && redis.exitCode === null) {
    redis.kill('SIGCONT');
    await stopRedis(redis);
  }
});

/** Eight clients on both instances until `stop()`: the statuses they got. */
function load(apiKey: string): { statuses: number[]; stop(): Promise<void> } {
  const statuses: number[] = [];
  let running = true;
  const loops = Array.from({ length: 8 }, async (_, i) => {
    const instance = cluster.instances[i % INSTANCES]!;
    while (running) {
      const res = await fetch(`${instance.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: i % 2 === 0 ? 'priced-echo' : 'slow-echo', max_tokens: 8, messages: [{ role: 'user', content: 'spend' }] }),
      }).catch(() => undefined);
      statuses.push(res?.status ?? 0);
      await res?.text();
      if (res?.status !== 200) await sleep(50);
    }
  });
  return {
    statuses,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The account's reserved credits as its own key sees them. */
async function reservedMicros(apiKey: string): Promise<number> {
  const res = await fetch(`${cluster.instances[0]!.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
  return ((await res.json()) as { reserved: { micros: number } }).reserved.micros;
}

/** Every answered request charged once: the store's balance = start − Σ charges = the ledger. */
async function expectBooksExact(accountId: string, answered: number): Promise<void> {
  await sleep(1_500);
  await cluster.flushUsage();
  const usage = await cluster.store.listUsage(accountId, { limit: 100_000 });
  expect(usage.filter((row) => row.status === 200)).toHaveLength(answered);
  const balance = await cluster.store.balanceOf(accountId);
  expect(balance).toBe(START_MICROS - usage.reduce((sum, row) => sum + row.costMicros, 0));
  expect(await cluster.store.sumLedger(accountId)).toBe(balance);
}

describe('a stalled Redis (SIGSTOP)', () => {
  it('admissions that timed out while it was stopped hold nothing once it resumes', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: START_MICROS });
    const traffic = load(apiKey);
    await sleep(800);
    redis.kill('SIGSTOP');
    await sleep(2_000);
    redis.kill('SIGCONT');
    await sleep(1_500);
    await traffic.stop();
    // The leases last 30 s: a hold left by an abandoned admission would still show here.
    await expect.poll(() => reservedMicros(apiKey), { timeout: 5_000, interval: 200 }).toBe(0);
    expect(traffic.statuses).toContain(503);
    expect(traffic.statuses.slice(-8).every((status) => status === 200)).toBe(true);
    expect(traffic.statuses.filter((status) => status === 402)).toEqual([]);
    await expectBooksExact(account.id, traffic.statuses.filter((status) => status === 200).length);
  }, 60_000);
});

describe('a Redis that restarts empty', () => {
  it('keeps usage flowing to the store, with what was settled while it was down', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: START_MICROS });
    const traffic = load(apiKey);
    await sleep(800);
    // Stopped between two of the usage writer's batches, so the stream holds nothing unwritten.
    await traffic.stop();
    await sleep(600);
    const slow = cluster.instances[1]!.client(apiKey).chat.completions.create({ model: 'slow-echo', max_tokens: 8, messages: [{ role: 'user', content: 'across the restart' }] });
    await sleep(100);
    await stopRedis(redis);
    await sleep(600); // the slow answer settles while Redis is gone: kept, and retried
    redis = await startRedis();
    await slow;
    const after = load(apiKey);
    await sleep(2_000);
    await after.stop();
    expect(after.statuses.slice(-8).every((status) => status === 200)).toBe(true);
    const answered = [...traffic.statuses, ...after.statuses].filter((status) => status === 200).length + 1;
    await expectBooksExact(account.id, answered);
  }, 60_000);
});
