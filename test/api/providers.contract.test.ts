// One suite, generated for every provider kind lmgate speaks (src/models/upstream/providers.ts):
// a real llama.cpp server and fakes of OpenAI's and Anthropic's APIs on their real wire
// formats. Whatever the provider and whatever dialect the client speaks, a call's in-band
// usage carries a cost equal to the price of the usage shown beside it, the usage record
// holds the same tokens and charge, and the balance moves by exactly that charge.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../../src/billing/pricing.js';
import { KIND_PRICE, KIND_PRICES } from '../helpers/cost.js';
import type { Usage } from '../../src/billing/usage.js';
import { usageOfAnthropic, usageOfChat } from '../../src/models/upstream/usage-readers.js';
import type { UsageRecord } from '../../src/store/store.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { startLlamaServer, type LlamaServer } from '../helpers/llama-server.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

// Every kind its own price, so a kind read wrong shows.
const PRICE = KIND_PRICE;
const PRICES = KIND_PRICES;
const START_CREDITS = 10;
const OPENAI_USAGE = {
  prompt_tokens: 1_000,
  completion_tokens: 400,
  total_tokens: 1_400,
  prompt_tokens_details: { cached_tokens: 600 },
  completion_tokens_details: { reasoning_tokens: 150 },
};

let llama: LlamaServer;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;
let t: TestApp;

const PROVIDERS = [
  { name: 'llama.cpp server (kind openai)', model: 'via-llama' },
  { name: 'OpenAI (kind openai)', model: 'via-openai' },
  { name: 'Anthropic (kind anthropic)', model: 'via-anthropic' },
];

beforeAll(async () => {
  [llama, openai, anthropic] = await Promise.all([startLlamaServer(), startFakeUpstream({ usage: OPENAI_USAGE }), startFakeAnthropic({ cache: { read: 1_000, written: 300, written1h: 100 } })]);
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 100_000_000, concurrency: 20, models: ['*'] } },
      models: {
        'via-llama': { context: 2048, max_output: 16, price: PRICE, deployments: [{ url: llama.url, model: llama.model }] },
        'via-openai': { price: PRICE, deployments: [{ url: openai.url, model: 'gpt-x' }] },
        'via-anthropic': { price: PRICE, deployments: [{ kind: 'anthropic', url: anthropic.url, model: 'claude-x' }] },
      },
    },
  });
}, 600_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([llama?.close(), openai?.close(), anthropic?.close()]);
});

/** The account's one usage record, and its balance, once the writer has stored it. */
async function settled(accountId: string): Promise<{ record: UsageRecord; spentMicros: number }> {
  await t.flushUsage();
  const records = await t.store.listUsage(accountId);
  expect(records).toHaveLength(1);
  return { record: records[0]!, spentMicros: START_CREDITS * 1_000_000 - (await t.store.balanceOf(accountId)) };
}

/** A record's tokens by kind, as a Usage. */
function usageOfRecord(record: UsageRecord): Usage {
  return {
    promptTokens: record.promptTokens,
    completionTokens: record.completionTokens,
    cachedTokens: record.cachedTokens,
    cacheWriteTokens: record.cacheWriteTokens,
    cacheWrite1hTokens: record.cacheWrite1hTokens,
    reasoningTokens: record.reasoningTokens,
  };
}

/** A usage without its zero parts, as the readers give it. */
function withoutEmptyParts(usage: Usage): Usage {
  return Object.fromEntries(Object.entries(usage).filter(([, value]) => value !== 0 && value !== undefined)) as unknown as Usage;
}

/** The usage shown to the client and its cost agree with each other, with the record and with the balance. */
function expectOneCharge(shown: Usage, costCredits: number | undefined, record: UsageRecord, spentMicros: number): void {
  const charge = costMicros(PRICES, shown);
  expect(charge).toBeGreaterThan(0);
  if (costCredits !== undefined) expect(Math.round(costCredits * 1_000_000)).toBe(charge);
  expect(record).toMatchObject({ promptTokens: shown.promptTokens, completionTokens: shown.completionTokens, basis: 'reported', outcome: 'completed', costMicros: charge, shortfallMicros: 0 });
  expect(costMicros(PRICES, usageOfRecord(record))).toBe(charge);
  expect(spentMicros).toBe(charge);
}

describe.each(PROVIDERS)('a model served by $name', ({ model }) => {
  it('chat, whole: usage.cost is the price of the usage beside it, and the record and the balance say the same', async () => {
    const { account, apiKey } = await t.createAccount({ credits: START_CREDITS });
    const completion = await t.client(apiKey).chat.completions.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Say something.' }] });
    expect(completion.model).toBe(model);
    const shown = usageOfChat(completion.usage)!;
    const { record, spentMicros } = await settled(account.id);
    expectOneCharge(shown, (completion.usage as unknown as { cost?: number }).cost, record, spentMicros);
    expect((completion.usage as unknown as { cost?: number }).cost).toBeDefined();
  });

  it('chat, streamed with include_usage: one usage chunk, last, its cost the price of its usage', async () => {
    const { account, apiKey } = await t.createAccount({ credits: START_CREDITS });
    const stream = await t.client(apiKey).chat.completions.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Say something.' }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const withUsage = chunks.filter((chunk) => chunk.usage);
    expect(withUsage).toHaveLength(1);
    expect(chunks.at(-1)).toBe(withUsage[0]);
    expect(chunks.every((chunk) => chunk.model === model)).toBe(true);
    const usage = withUsage[0]!.usage!;
    const { record, spentMicros } = await settled(account.id);
    expectOneCharge(usageOfChat(usage)!, (usage as unknown as { cost?: number }).cost, record, spentMicros);
    expect((usage as unknown as { cost?: number }).cost).toBeDefined();
  });

  it('chat, streamed without include_usage: no usage reaches the client, and the charge is still the reported usage’s', async () => {
    const { account, apiKey } = await t.createAccount({ credits: START_CREDITS });
    const stream = await t.client(apiKey).chat.completions.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Say something.' }], stream: true });
    let text = '';
    for await (const chunk of stream) {
      expect(chunk.usage ?? undefined).toBeUndefined();
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
    const { record, spentMicros } = await settled(account.id);
    expectOneCharge(usageOfRecord(record), undefined, record, spentMicros);
  });

  it('messages (Anthropic’s dialect), whole and streamed: the usage shown is the usage charged', async () => {
    for (const stream of [false, true]) {
      const { account, apiKey } = await t.createAccount({ credits: START_CREDITS });
      const caller = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
      const request = { model, max_tokens: 16, messages: [{ role: 'user' as const, content: 'Say something.' }] };
      const message = stream ? await caller.messages.stream(request).finalMessage() : await caller.messages.create(request);
      expect(message.model).toBe(model);
      const { record, spentMicros } = await settled(account.id);
      // Anthropic's usage has no reasoning part (an OpenAI upstream's is priced apart, and
      // recorded), and a stream tells the split of cache writes by lifetime only in
      // message_start, before the upstream has answered: its message_delta's counts (which
      // the SDK keeps) say the writes' total. Beyond that, the usage shown is the record's,
      // and the record's price was charged.
      const shown = usageOfAnthropic(message.usage);
      const recorded = usageOfRecord(record);
      if (stream) recorded.cacheWriteTokens = (recorded.cacheWriteTokens ?? 0) + (recorded.cacheWrite1hTokens ?? 0);
      if (stream) recorded.cacheWrite1hTokens = 0;
      expect({ ...shown, reasoningTokens: record.reasoningTokens || undefined }).toEqual({ ...withoutEmptyParts(recorded), reasoningTokens: record.reasoningTokens || undefined });
      expectOneCharge(usageOfRecord(record), undefined, record, spentMicros);
    }
  });
});
