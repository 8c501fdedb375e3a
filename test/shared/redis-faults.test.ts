// Redis faults that must cost nothing, against redis-servers of this suite's own (never the
// shared one), reached through a proxy: stalled (SIGSTOP) under load, admissions that timed
// out must not hold credits once it resumes; killed and started again empty, or failed over
// to an empty replica, under load, usage must keep reaching the store, with what was settled
// just before (its stream entries lost) and during the outage, and no spurious 402.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTAGE_LOAD, startCluster, type TestCluster } from '../helpers/start-cluster.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const INSTANCES = 2;
const START_MICROS = 50_000_000;
let port: number;
let redis: ChildProcess;
let proxy: TcpProxy;
let cluster: TestCluster;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: chosen } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return chosen;
}

/** A redis-server with nothing saved, resolved once it accepts connections. */
async function startRedis(on = port): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(on), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  proxy = await startTcpProxy(port);
  cluster = await startCluster(INSTANCES, OUTAGE_LOAD, { redisUrl: proxy.url('redis') });
}, 60_000);
afterAll(async () => {
  await cluster?.close();
  await proxy?.close();
  if (redis && redis.exitCode === null) {
    redis.kill('SIGCONT');
    await stopRedis(redis);
  }
});

/** Eight clients on both instances until `stop()`: the statuses they got, and the slowest answer (ms). */
function load(apiKey: string): { statuses: number[]; slowestMs(): number; stop(): Promise<void> } {
  const statuses: number[] = [];
  let slowestMs = 0;
  let running = true;
  const loops = Array.from({ length: 8 }, async (_, i) => {
    const instance = cluster.instances[i % INSTANCES]!;
    while (running) {
      const startedAt = performance.now();
      const res = await fetch(`${instance.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: i % 2 === 0 ? 'priced-echo' : 'slow-echo', max_tokens: 8, messages: [{ role: 'user', content: 'spend' }] }),
      }).catch(() => undefined);
      statuses.push(res?.status ?? 0);
      await res?.text();
      slowestMs = Math.max(slowestMs, performance.now() - startedAt);
      if (res?.status !== 200) await sleep(50);
    }
  });
  return {
    statuses,
    slowestMs: () => slowestMs,
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
    const answered = traffic.statuses.filter((status) => status === 200).length;
    await expectBooksExact(account.id, answered);
    console.log(`stall: ${answered} answered and charged (0 lost), ${traffic.statuses.filter((status) => status === 503).length} refused with 503 while Redis was stopped, 0 spurious 402; slowest answer ${traffic.slowestMs().toFixed(0)} ms`);
  }, 60_000);
});

/** Load through a Redis that is taken away and replaced by an empty one by `fault`; then the books. */
async function throughAnEmptyRedis(name: string, fault: () => Promise<void>): Promise<void> {
  const { account, apiKey } = await cluster.createAccount({ micros: START_MICROS });
  const traffic = load(apiKey);
  await sleep(800);
  const slow = cluster.instances[1]!.client(apiKey).chat.completions.create({ model: 'slow-echo', max_tokens: 8, messages: [{ role: 'user', content: 'across the fault' }] });
  await sleep(100);
  await fault();
  await slow;
  await sleep(2_000);
  await traffic.stop();
  const statuses = traffic.statuses;
  expect(statuses.slice(-8).every((status) => status === 200)).toBe(true);
  expect(statuses.filter((status) => status === 402)).toEqual([]);
  const answered = statuses.filter((status) => status === 200).length + 1;
  await expectBooksExact(account.id, answered);
  const refused = statuses.filter((status) => status === 503).length;
  console.log(`${name}: ${answered} answered and charged (0 lost), ${refused} refused with 503 while Redis was away, 0 spurious 402; slowest answer ${traffic.slowestMs().toFixed(0)} ms`);
}

describe('a Redis that comes back empty', () => {
  it('restarted under load: usage keeps reaching the store, with what was settled before and during the outage', async () => {
    await throughAnEmptyRedis('restart empty', async () => {
      await stopRedis(redis);
      await sleep(600); // the slow answer settles while Redis is gone: kept, and retried
      redis = await startRedis();
    });
  }, 60_000);

  it('failed over to an empty replica under load: the same', async () => {
    const replicaPort = await freePort();
    const replica = await startRedis(replicaPort);
    const old = redis;
    await throughAnEmptyRedis('failover to an empty replica', async () => {
      proxy.switchTo(replicaPort);
      redis = replica;
    });
    await stopRedis(old);
  }, 60_000);
});
