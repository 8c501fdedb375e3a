// One consistent read of a balance in shared mode: three instances spend one account's
// credits while its billing endpoint is read every 10 ms. Each instance writes usage
// batches to the store and acknowledges them in Redis on its own; no read may count a
// charge twice (stored and still pending) nor miss one.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const INSTANCES = 3;
const REQUESTS = 1_000;
let cluster: TestCluster;

beforeAll(async () => {
  cluster = await startCluster(INSTANCES, {
    default_tier: 'roomy',
    tiers: { roomy: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 10_000, models: ['*'] } },
    models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 40, price: { input: 100, output: 100 }, max_output: 16 } },
  });
}, 60_000);
afterAll(() => cluster?.close());

interface Reading {
  balance: number;
  reserved: number;
}

describe('a balance read while three instances spend it', () => {
  it('never shows a balance or an available amount below 0, and ends exact', async () => {
    const messages = [{ role: 'user' as const, content: 'spend it' }];
    const probe = await cluster.createAccount({ micros: 1_000_000 });
    const { usage: probed } = await cluster.instances[0]!.client(probe.apiKey).chat.completions.create({ model: 'priced-echo', messages, max_tokens: 16 });
    const worth = (probed!.prompt_tokens + probed!.completion_tokens) * 100;
    const start = Math.round((worth * REQUESTS) / 2);
    const { account, apiKey } = await cluster.createAccount({ micros: start });

    // A read every 10 ms, round-robin over the instances, each without waiting for the last.
    const readings: Reading[] = [];
    const reads: Promise<void>[] = [];
    let sampled = 0;
    const read = async (instance: number): Promise<void> => {
      const response = await fetch(`${cluster.instances[instance]!.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { balance: { micros: number }; reserved: { micros: number } };
      readings.push({ balance: body.balance.micros, reserved: body.reserved.micros });
    };
    const sampler = setInterval(() => reads.push(read(sampled++ % INSTANCES)), 10);

    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) =>
        clients[i % INSTANCES]!.chat.completions.create({ model: 'priced-echo', messages, max_tokens: 16 }).then(
          () => 200,
          (err: unknown) => (err instanceof OpenAI.APIError ? (err.status ?? 0) : Promise.reject(err)),
        ),
      ),
    );
    // Sampled on while the instances' usage batches land in the store.
    await new Promise((resolve) => setTimeout(resolve, 500));
    clearInterval(sampler);
    await Promise.all(reads);
    await cluster.flushUsage();

    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThan(REQUESTS);
    const lowestBalance = Math.min(...readings.map((r) => r.balance));
    const lowestAvailable = Math.min(...readings.map((r) => r.balance - r.reserved));
    console.log(`balance reads: ${readings.length} samples during ${REQUESTS} requests over ${INSTANCES} instances (${served} served); lowest balance ${lowestBalance}, lowest available ${lowestAvailable} µcr`);
    expect(readings.length).toBeGreaterThan(100);
    expect(lowestBalance).toBeGreaterThanOrEqual(0);
    expect(lowestAvailable).toBeGreaterThanOrEqual(0);

    const usage = await cluster.store.listUsage(account.id, { limit: 100_000 });
    expect(usage).toHaveLength(served);
    const charged = usage.reduce((sum, row) => sum + row.costMicros - row.shortfallMicros, 0);
    const balance = await cluster.store.balanceOf(account.id);
    expect(balance).toBe(start - charged);
    expect(await cluster.store.sumLedger(account.id)).toBe(balance);
    const final = (await (await fetch(`${cluster.instances[0]!.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as { balance: { micros: number }; reserved: { micros: number } };
    expect(final.balance.micros).toBe(balance);
    expect(final.reserved.micros).toBe(0);
  }, 120_000);
});
