// A key's credit limit across two instances sharing PostgreSQL and Redis: spends spread over
// both never pass it, a request running on one holds its worst case against the limit on
// the other, and only keys with a limit have a count in Redis.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keySpendLimit } from '../../src/billing/spend-limit.js';
import type { KeyCreditLimit } from '../../src/store/store.js';
import { SharedAdmission } from '../../src/shared/shared-admission.js';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';

const HELLO = [{ role: 'user' as const, content: 'Hello there, general Kenobi' }];
type ApiError = InstanceType<typeof OpenAI.APIError>;
type CostedUsage = OpenAI.CompletionUsage & { cost: number };
const micros = (usage: OpenAI.CompletionUsage | undefined): number => Math.round((usage as CostedUsage).cost * 1_000_000);

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startCluster(2, {
    default_tier: 'roomy',
    tiers: { roomy: { rpm: 100_000, tpm: 100_000_000, concurrency: 200, models: ['*'] } },
    models: {
      // 1 input token = 1,000 micro-credits, 1 output token = 2,000.
      'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } },
      // Ten tokens in about a second, whatever max_tokens allows.
      'slow-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 10, default_tokens: 10, max_output: 1000, price: { input: 1000, output: 2000 } },
    },
  });
}, 60_000);
afterAll(() => cluster?.close());

/** An account with 100 credits and its key, given `limit`. */
async function limitedKey(limit: KeyCreditLimit | null): Promise<{ keyId: string; apiKey: string; accountId: string }> {
  const { account, apiKey } = await cluster.createAccount({ micros: 100_000_000 });
  const [key] = await cluster.store.listKeys(account.id);
  if (limit) await cluster.instances[0]!.app.commands.keys.update(key!.id, { controls: { creditLimit: limit } });
  return { keyId: key!.id, apiKey, accountId: account.id };
}

const stateOf = (i: number) => (cluster.instances[i]!.app.admission as SharedAdmission).state;

describe('a key’s credit limit across instances', () => {
  it('two instances enforce one limit: concurrent spends spread over both never pass it, and both count the same spend', async () => {
    const limit = { amountMicros: 300_000, period: 'month' as const };
    const { keyId, apiKey } = await limitedKey(limit);
    const clients = cluster.instances.map((instance) => instance.client(apiKey));
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        clients[i % 2]!.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 40 }).then(
          (answer) => ({ status: 200, charged: micros(answer.usage), reason: undefined }),
          (err: unknown) => ({ status: (err as ApiError).status, charged: 0, reason: ((err as ApiError).error as { reason?: string }).reason }),
        ),
      ),
    );
    const served = outcomes.filter((o) => o.status === 200);
    expect(served.length).toBeGreaterThanOrEqual(2);
    expect(outcomes.filter((o) => o.status !== 200).every((o) => o.status === 402 && o.reason === 'key_credit_limit')).toBe(true);
    const charged = served.reduce((sum, o) => sum + o.charged, 0);
    expect(charged).toBeLessThanOrEqual(limit.amountMicros);
    console.log(`one limit over two instances: 60 concurrent requests, ${served.length} served, ${charged} of ${limit.amountMicros} micro-credits spent`);

    for (const instance of cluster.instances) expect(await instance.app.admission.spent(keySpendLimit(keyId, limit))).toBe(charged);
    await cluster.flushUsage();
    expect(await cluster.store.spendOf({ keyId: keyId }, null)).toBe(charged);
  });

  it('a request running on one instance holds its worst case against the key’s limit on the other', async () => {
    // What each request's prompt costs, learned with a key without a limit.
    const probe = cluster.instances[0]!.client((await limitedKey(null)).apiKey);
    const echoPrompt = (await probe.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 1 })).usage!.prompt_tokens;
    const lorem = [{ role: 'user' as const, content: 'Write something.' }];
    const loremPrompt = (await probe.chat.completions.create({ model: 'slow-lorem', messages: lorem, max_tokens: 1 })).usage!.prompt_tokens;
    const slowWorst = loremPrompt * 1_000 + 20 * 2_000;
    const echoWorst = echoPrompt * 1_000 + 20 * 2_000;

    // Room for both worst cases but one micro-credit.
    const { apiKey } = await limitedKey({ amountMicros: slowWorst + echoWorst - 1, period: 'total' });
    const [first, second] = cluster.instances.map((instance) => instance.client(apiKey));
    const stream = await first!.chat.completions.create({ model: 'slow-lorem', messages: lorem, max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    const chunks = stream[Symbol.asyncIterator]();
    await chunks.next(); // admitted, and running for about a second

    const refused = await second!.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 }).then(
      () => expect.unreachable('the request succeeded'),
      (err: unknown) => err as ApiError,
    );
    expect(refused.status).toBe(402);
    expect(refused.error).toMatchObject({ reason: 'key_credit_limit', credits_required: echoWorst / 1_000_000, credits_available: (echoWorst - 1) / 1_000_000 });

    let usage: OpenAI.CompletionUsage | undefined;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) usage ??= next.value.usage ?? undefined;
    // Ten tokens written of the twenty held: the rest of the hold is given back at settlement.
    expect(usage!.completion_tokens).toBe(10);
    await second!.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });
  });

  it('only a key with a limit has a count in Redis, and the count expires once the key is idle', async () => {
    const free = await limitedKey(null);
    const limited = await limitedKey({ amountMicros: 1_000_000, period: 'total' });
    for (const { apiKey } of [free, limited]) {
      for (const instance of cluster.instances) await instance.client(apiKey).chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 4 });
    }
    const state = stateOf(0);
    const leftOf = async (keyId: string) => {
      const { spend, leases, amounts } = state.spend.keys(`key:${keyId}`);
      return state.redis.exists(spend, leases, amounts);
    };
    expect(await leftOf(free.keyId)).toBe(0);
    // Settled: only the count is left, no hold.
    expect(await leftOf(limited.keyId)).toBe(1);
    const ttlMs = await state.redis.pttl(state.spend.keys(`key:${limited.keyId}`).spend);
    expect(ttlMs).toBeGreaterThan(34 * 24 * 3600 * 1000);
    expect(ttlMs).toBeLessThanOrEqual(35 * 24 * 3600 * 1000);
  });
});
