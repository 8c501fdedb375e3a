// Redis goes away under load, stopped or hung, and comes back: no request waits much more
// than a second because of it, refusals are the spec's 503, no balance is overdrawn or
// charged twice, no charge settled during the outage is lost, and service returns by itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTAGE_LOAD, startCluster, type TestCluster } from '../helpers/start-cluster.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const INSTANCES = 2;
let proxy: TcpProxy;
let cluster: TestCluster;

beforeAll(async () => {
  proxy = await startTcpProxy(6379);
  cluster = await startCluster(
    INSTANCES,
    OUTAGE_LOAD,
    { redisUrl: proxy.url('redis') },
  );
}, 60_000);
afterAll(async () => {
  await cluster?.close();
  await proxy?.close();
});

interface Outcome {
  status: number;
  ms: number;
  body: string;
}

describe.each(['cut', 'stall'] as const)('Redis %s under load', (how) => {
  it('bounds every wait, refuses with the spec 503, never overdraws, and recovers by itself', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: 50_000_000 });
    const outcomes: Outcome[] = [];
    let running = true;
    const loops = Array.from({ length: 8 }, async (_, i) => {
      const instance = cluster.instances[i % INSTANCES]!;
      while (running) {
        const started = performance.now();
        const res = await fetch(`${instance.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: i % 2 === 0 ? 'priced-echo' : 'slow-echo', max_tokens: 8, messages: [{ role: 'user', content: 'spend' }] }),
        });
        const body = await res.text();
        outcomes.push({ status: res.status, ms: performance.now() - started, body });
        if (res.status === 503) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
    await sleep(1_000);
    proxy[how]();
    await sleep(2_000);
    const metricsDuring = await (await fetch(`${cluster.instances[0]!.origin}/metrics`)).text();
    expect(metricsDuring).toContain('lmgate_mode{mode="shared"} 1');
    // A cut connection shows; a hung one only times out (and is refused all the same).
    if (how === 'cut') expect(metricsDuring).toMatch(/^lmgate_redis_up 0$/m);
    const restoredAt = outcomes.length;
    proxy.restore();
    // Back by itself: both instances answer 200 again.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && !outcomes.slice(restoredAt).some((o) => o.status === 200 && outcomes.indexOf(o) > restoredAt + 20)) await sleep(100);
    await sleep(1_000);
    running = false;
    await Promise.all(loops);

    const refused = outcomes.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const o of refused) expect(JSON.parse(o.body).error).toMatchObject({ code: 503, message: 'The service is briefly unavailable. Please try again shortly.' });
    expect(outcomes.every((o) => o.status === 200 || o.status === 503)).toBe(true);
    // Nothing waits on Redis beyond its command timeout (0.5 s) plus the answer's own 0.4 s.
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    expect(slowest).toBeLessThan(1_500);
    const tail = outcomes.slice(-16);
    expect(tail.every((o) => o.status === 200)).toBe(true);
    expect(await (await fetch(`${cluster.instances[0]!.origin}/metrics`)).text()).toMatch(/^lmgate_redis_up 1$/m);

    // Settlements kept through the outage reach the store: every 200 is charged once.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await cluster.flushUsage();
    const served = outcomes.filter((o) => o.status === 200).length;
    const usage = await cluster.store.listUsage(account.id, { limit: 100_000 });
    expect(usage.filter((row) => row.status === 200)).toHaveLength(served);
    const balance = await cluster.store.balanceOf(account.id);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(balance).toBe(50_000_000 - usage.reduce((sum, row) => sum + row.costMicros, 0));
    expect(await cluster.store.sumLedger(account.id)).toBe(balance);
    console.log(`redis ${how}: ${outcomes.length} requests, ${served} served, ${refused.length} refused (503), slowest ${slowest.toFixed(0)} ms`);
  }, 60_000);
});
