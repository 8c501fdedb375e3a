// /v1/completions and /v1/responses in shared mode: two instances on one PostgreSQL and
// Redis, each request sent to one of them in turn, on demo models and through a fake
// upstream (translated to chat, and passed through to its /responses). Each charge lands
// once: one usage record and one ledger entry per request, the balance the ledger's sum,
// and every instance's Redis view the same balance with nothing left reserved.
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const INSTANCES = 2;
const START_MICROS = 50_000_000;
const PRICES = { inputPerMTokMicros: 3_000_000, outputPerMTokMicros: 7_000_000 };
const PRICE = { input: 3, output: 7 };
/** Requests of each kind, spread over the instances and sent at once. */
const ROUNDS = 6;

let cluster: TestCluster;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  cluster = await startCluster(INSTANCES, {
    default_tier: 'roomy',
    tiers: { roomy: { rpm: 100_000, tpm: 100_000_000, concurrency: 1_000, models: ['*'] } },
    models: {
      'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: PRICE },
      'up-chat': { price: PRICE, deployments: [{ url: upstream.url, model: 'upstream-chat' }] },
      'up-native': { price: PRICE, deployments: [{ url: upstream.url, model: 'upstream-native', responses: 'native' }] },
    },
  });
}, 60_000);
afterAll(async () => {
  await cluster?.close();
  await upstream?.close();
});

/**
 * One request with the client of an instance; the tokens it reports it used. The output
 * ceiling leaves room for the fake upstream's usage, which a charge never passes.
 */
type Call = (client: OpenAI) => Promise<{ input: number; output: number }>;

async function completion(client: OpenAI, model: string, stream: boolean): Promise<{ input: number; output: number }> {
  if (!stream) {
    const { usage } = await client.completions.create({ model, prompt: 'count me once', max_tokens: 1000 });
    return { input: usage!.prompt_tokens, output: usage!.completion_tokens };
  }
  let usage: OpenAI.CompletionUsage | undefined;
  const events = await client.completions.create({ model, prompt: 'count me once', max_tokens: 1000, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of events) usage = chunk.usage ?? usage;
  return { input: usage!.prompt_tokens, output: usage!.completion_tokens };
}

async function response(client: OpenAI, model: string, stream: boolean): Promise<{ input: number; output: number }> {
  if (!stream) {
    const { usage } = await client.responses.create({ model, input: 'count me once', max_output_tokens: 1000 });
    return { input: usage!.input_tokens, output: usage!.output_tokens };
  }
  let final: OpenAI.Responses.Response | undefined;
  const events = await client.responses.create({ model, input: 'count me once', max_output_tokens: 1000, stream: true });
  for await (const event of events) if (event.type === 'response.completed') final = event.response;
  return { input: final!.usage!.input_tokens, output: final!.usage!.output_tokens };
}

const ENDPOINTS: [string, Call[]][] = [
  ['/v1/completions', [(c) => completion(c, 'priced-echo', false), (c) => completion(c, 'priced-echo', true), (c) => completion(c, 'up-chat', false), (c) => completion(c, 'up-chat', true)]],
  [
    '/v1/responses',
    [
      (c) => response(c, 'priced-echo', false),
      (c) => response(c, 'priced-echo', true),
      (c) => response(c, 'up-chat', true),
      (c) => response(c, 'up-native', false),
      (c) => response(c, 'up-native', true),
    ],
  ],
];

describe.each(ENDPOINTS)('%s in shared mode', (_path, calls) => {
  it('charges each request once, whichever instance served it: one usage record and one ledger entry each, the balance the ledger’s sum', async () => {
    const { account, apiKey } = await cluster.createAccount({ micros: START_MICROS });
    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    const work = Array.from({ length: ROUNDS }, (_, round) => calls.map((call, i) => call(clients[(round + i) % INSTANCES]!))).flat();
    const reported = await Promise.all(work);

    await cluster.flushUsage();
    const records = await cluster.store.listUsage(account.id, { limit: 1_000 });
    expect(records).toHaveLength(work.length);
    expect(records.every((record) => record.status === 200)).toBe(true);
    // Each record is the cost of the tokens its answer reported, and nothing else.
    const expected = reported.map(({ input, output }) => costMicros(PRICES, input, output)).sort((a, b) => a - b);
    expect(records.map((record) => record.costMicros).sort((a, b) => a - b)).toEqual(expected);
    const charged = expected.reduce((sum, cost) => sum + cost, 0);
    expect(charged).toBeGreaterThan(0);

    const balance = await cluster.store.balanceOf(account.id);
    expect(balance).toBe(START_MICROS - charged);
    expect(await cluster.store.sumLedger(account.id)).toBe(balance);
    const usageEntries = (await cluster.store.listLedger(account.id, { limit: 1_000 })).filter((entry) => entry.kind === 'usage');
    expect(usageEntries.map((entry) => entry.reference).sort()).toEqual(records.map((record) => record.id).sort());
    const costOf = new Map(records.map((record) => [record.id, record.costMicros]));
    for (const entry of usageEntries) expect(entry.amountMicros).toBe(-costOf.get(entry.reference!)!);

    // Every instance reads the same balance from Redis, with nothing left reserved.
    for (const instance of cluster.instances) {
      const res = await fetch(`${instance.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(await jsonOf(res)).toMatchObject({ balance: { micros: balance }, reserved: { micros: 0 } });
    }
  }, 60_000);
});
