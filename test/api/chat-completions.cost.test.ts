// Cost in-band, in one process and in shared mode (where admission and settlement run in
// Redis): `usage.cost` of an answer is its usage record's cost, a whole answer carries the
// balance left in X-Lmgate-Balance, and a 402 says what the request would hold, what is
// available and, when only the output ceiling is too large, the max_tokens that would fit.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatCredits } from '../../src/money.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { startApp } from '../helpers/start-app.js';
import { startCluster } from '../helpers/start-cluster.js';

// 1 input token = 1,000 micros, 1 output token = 2,000 micros; at most 1,000 output tokens.
const OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 100_000, tpm: 100_000_000, concurrency: 100, models: ['*'] } },
  models: {
    'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } },
  },
};
const INPUT_MICROS = 1_000;
const OUTPUT_MICROS = 2_000;
const MAX_OUTPUT = 1_000;
const HELLO = { model: 'priced-echo', messages: [{ role: 'user' as const, content: 'Hello there, general Kenobi' }] };

/** What the suite needs of one instance, in either mode. */
interface Target {
  store: Store;
  client(apiKey: string): OpenAI;
  createAccount(micros: number): Promise<{ accountId: string; apiKey: string }>;
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

async function memoryTarget(): Promise<Target> {
  const t = await startApp({ overrides: OVERRIDES });
  return {
    store: t.store,
    client: (apiKey) => t.client(apiKey),
    createAccount: async (micros) => {
      const { account, apiKey } = await t.createAccount({ credits: micros / 1_000_000 });
      return { accountId: account.id, apiKey };
    },
    flushUsage: () => t.flushUsage(),
    close: () => t.close(),
  };
}

async function sharedTarget(): Promise<Target> {
  const cluster = await startCluster(1, OVERRIDES);
  const instance = cluster.instances[0]!;
  return {
    store: cluster.store,
    client: (apiKey) => instance.client(apiKey),
    createAccount: async (micros) => {
      const { account, apiKey } = await cluster.createAccount({ micros });
      return { accountId: account.id, apiKey };
    },
    flushUsage: () => cluster.flushUsage(),
    close: () => cluster.close(),
  };
}

type ApiError = InstanceType<typeof OpenAI.APIError>;
type CostedUsage = OpenAI.CompletionUsage & { cost: number };

describe.each([
  ['one process', memoryTarget],
  ['shared mode', sharedTarget],
] as const)('cost in-band, %s', (_mode, start) => {
  let target: Target;

  beforeAll(async () => {
    target = await start();
  });
  afterAll(() => target.close());

  /** The usage record of a request, once the store has it (shared mode settles after the answer). */
  async function recordOf(accountId: string, requestId: string): Promise<UsageRecord> {
    return vi.waitFor(
      async () => {
        await target.flushUsage();
        const record = (await target.store.listUsage(accountId)).find((each) => each.requestId === requestId);
        if (record === undefined) throw new Error(`no usage record for ${requestId} yet`);
        return record;
      },
      { timeout: 10_000, interval: 50 },
    );
  }

  it('a whole answer carries usage.cost equal to its usage record, and X-Lmgate-Balance the balance left', async () => {
    const { accountId, apiKey } = await target.createAccount(10_000_000);
    const client = target.client(apiKey);
    let expectedBalance = 10_000_000;
    for (let round = 0; round < 2; round++) {
      const { data, response } = await client.chat.completions.create(HELLO).withResponse();
      const record = await recordOf(accountId, response.headers.get('x-request-id')!);
      const cost = record.costMicros;
      expect(cost).toBe(record.promptTokens * INPUT_MICROS + record.completionTokens * OUTPUT_MICROS);
      expect((data.usage as CostedUsage).cost).toBe(cost / 1_000_000);
      expectedBalance -= cost;
      expect(response.headers.get('x-lmgate-balance')).toBe(formatCredits(expectedBalance));
    }
    expect(await target.store.balanceOf(accountId)).toBe(expectedBalance);
  });

  it('the final usage chunk of a stream that asked for usage carries its cost', async () => {
    const { accountId, apiKey } = await target.createAccount(10_000_000);
    const { data: stream, response } = await target
      .client(apiKey)
      .chat.completions.create({ ...HELLO, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const usages: CostedUsage[] = [];
    for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage as CostedUsage);
    expect(usages).toHaveLength(1);
    const record = await recordOf(accountId, response.headers.get('x-request-id')!);
    expect(record.costMicros).toBeGreaterThan(0);
    expect(usages[0]!.cost).toBe(record.costMicros / 1_000_000);
    // The balance is known only after the charge, when a stream's headers are long gone.
    expect(response.headers.get('x-lmgate-balance')).toBeNull();
  });

  it('a 402 adds the credits required and available, and the max_tokens that would fit when the ceiling is the problem', async () => {
    const { apiKey } = await target.createAccount(1_000_000);
    const client = target.client(apiKey);
    const refused = (await client.chat.completions.create(HELLO).catch((e: unknown) => e)) as ApiError;
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect(refused.status).toBe(402);
    const error = refused.error as Record<string, unknown>;
    expect(error.message).toBe('Insufficient credits. Please top up your balance to continue.');
    expect(error.credits_available).toBe(1);
    // The worst case: the prompt plus every token the model may write.
    const requiredMicros = Math.round((error.credits_required as number) * 1_000_000);
    const promptTokens = (requiredMicros - MAX_OUTPUT * OUTPUT_MICROS) / INPUT_MICROS;
    expect(Number.isInteger(promptTokens) && promptTokens > 0).toBe(true);
    const fit = Math.floor((1_000_000 - promptTokens * INPUT_MICROS) / OUTPUT_MICROS);
    expect(error.max_tokens_that_fit).toBe(fit);
    expect(error.hint).toContain(`max_tokens (or max_completion_tokens) of ${fit} or less`);

    const tooMany = (await client.chat.completions.create({ ...HELLO, max_tokens: fit + 1 }).catch((e: unknown) => e)) as ApiError;
    expect(tooMany.status).toBe(402);
    expect((tooMany.error as Record<string, unknown>).max_tokens_that_fit).toBe(fit);
    const answer = await client.chat.completions.create({ ...HELLO, max_completion_tokens: fit });
    expect(answer.choices[0]!.message.content).toBe(HELLO.messages[0]!.content);
  });

  it('a 402 for a prompt that alone does not fit names the figures and no max_tokens', async () => {
    const { apiKey } = await target.createAccount(5_000); // less than the prompt's 5+ tokens
    const refused = (await target.client(apiKey).chat.completions.create({ ...HELLO, max_tokens: 1 }).catch((e: unknown) => e)) as ApiError;
    expect(refused.status).toBe(402);
    const error = refused.error as Record<string, unknown>;
    expect(error.credits_available).toBe(0.005);
    expect(error.credits_required as number).toBeGreaterThan(0.005);
    expect(error).not.toHaveProperty('max_tokens_that_fit');
    expect(error).not.toHaveProperty('hint');
  });

  it('with nothing available, a 402 says so and offers no max_tokens', async () => {
    const { apiKey } = await target.createAccount(0);
    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = (await target.client(apiKey).chat.completions.create(HELLO).catch((e: unknown) => e)) as ApiError;
      expect(refused.status).toBe(402);
      const error = refused.error as Record<string, unknown>;
      expect(error.credits_available).toBe(0);
      expect(error).not.toHaveProperty('max_tokens_that_fit');
    }
  });
});
