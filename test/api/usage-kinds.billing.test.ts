// Every token priced by its kind, and every charge what was served: fake OpenAI and
// Anthropic upstreams (speaking their real wire formats) report cached input, cache
// writes and reasoning, which no local server produces; the demo models show n and stop
// sequences; and a charge above the hold comes out of the balance, cut only at 0.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../../src/billing/pricing.js';
import { KIND_PRICE, KIND_PRICES } from '../helpers/cost.js';
import { Commands } from '../../src/commands/commands.js';
import { Sessions } from '../../src/web-session/sessions.js';
import type { Usage } from '../../src/billing/usage.js';
import { ANTHROPIC_COUNT, startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

// Credits per million tokens of each kind, as an Anthropic-like price list.
const PRICE = KIND_PRICE;
const PRICES = KIND_PRICES;
const OPENAI_USAGE = {
  prompt_tokens: 1_000,
  completion_tokens: 400,
  total_tokens: 1_400,
  prompt_tokens_details: { cached_tokens: 600, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 150, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};
const OPENAI_KINDS: Usage = { promptTokens: 1_000, completionTokens: 400, cachedTokens: 600, reasoningTokens: 150 };

let t: TestApp;
let openai: FakeUpstream;
let anthropic: FakeAnthropic;

beforeAll(async () => {
  openai = await startFakeUpstream({ usage: OPENAI_USAGE });
  anthropic = await startFakeAnthropic();
  t = await startApp({
    overrides: {
      tiers: {
        free: { rpm: 10_000, tpm: 10_000_000, concurrency: 50, models: ['*'] },
        marked: { rpm: 10_000, tpm: 10_000_000, concurrency: 50, models: ['*'], price_multiplier: 1.5 },
      },
      models: {
        'gpt-like': { price: PRICE, deployments: [{ url: openai.url, model: 'gpt-x' }] },
        // The same upstream under a name whose holds have learned nothing yet.
        'gpt-fresh': { price: PRICE, deployments: [{ url: openai.url, model: 'gpt-x' }] },
        claude: { price: PRICE, deployments: [{ kind: 'anthropic', url: anthropic.url, model: 'claude-x' }] },
        'priced-echo': { backend: 'demo', kind: 'echo', price: { input: 1_000, output: 3_000 } },
        'priced-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 0, price: { input: 1_000, output: 3_000 } },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await openai.close();
  await anthropic.close();
});

async function onlyRecord(accountId: string) {
  await t.flushUsage();
  const records = await t.store.listUsage(accountId);
  expect(records).toHaveLength(1);
  return records[0]!;
}

describe('token kinds from an OpenAI upstream', () => {
  it('charges cached input and reasoning at their own prices, whole and streamed, and says so in-band', async () => {
    const expected = costMicros(PRICES, OPENAI_KINDS);
    // 400 plain input at 3, 600 cached at 0.3, 250 output at 15, 150 reasoning at 20 (credits per million).
    expect(expected).toBe(Math.ceil((400 * 3_000_000 + 600 * 300_000 + 250 * 15_000_000 + 150 * 20_000_000) / 1_000_000));
    for (const stream of [false, true]) {
      const { account, apiKey } = await t.createAccount({ credits: 10 });
      const client = t.client(apiKey);
      let told: number;
      if (stream) {
        const chunks = await client.chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
        const usages: unknown[] = [];
        for await (const chunk of chunks) if (chunk.usage) usages.push(chunk.usage);
        expect(usages).toHaveLength(1);
        told = (usages[0] as { cost: number }).cost;
      } else {
        const completion = await client.chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }] });
        expect(completion.usage).toMatchObject(OPENAI_USAGE);
        told = (completion.usage as unknown as { cost: number }).cost;
      }
      expect(Math.round(told * 1_000_000)).toBe(expected);
      const record = await onlyRecord(account.id);
      expect(record).toMatchObject({ promptTokens: 1_000, completionTokens: 400, cachedTokens: 600, reasoningTokens: 150, cacheWriteTokens: 0, basis: 'reported', costMicros: expected, shortfallMicros: 0 });
      expect(await t.store.balanceOf(account.id)).toBe(10_000_000 - expected);
      // The operator's report sums the kinds.
      const day = { fromIso: new Date(Date.now() - 86_400_000).toISOString(), untilIso: new Date(Date.now() + 86_400_000).toISOString() };
      const report = await t.store.reportUsage(day, { accountId: account.id });
      expect(report.byModel).toEqual([
        expect.objectContaining({ model: 'gpt-like', requests: 1, promptTokens: 1_000, cachedTokens: 600, cacheWriteTokens: 0, reasoningTokens: 150, countedRequests: 0, unpaidMicros: 0, costMicros: expected }),
      ]);
    }
  });

  it('a tier’s price multiplier scales every kind, rounded up once', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10, tier: 'marked' });
    const completion = await t.client(apiKey).chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }] });
    const expected = costMicros(PRICES, OPENAI_KINDS, { tierPpm: 1_500_000, accountPpm: 1_000_000 });
    expect(expected).toBe(Math.ceil((1.5 * (400 * 3_000_000 + 600 * 300_000 + 250 * 15_000_000 + 150 * 20_000_000)) / 1_000_000));
    expect(Math.round((completion.usage as unknown as { cost: number }).cost * 1_000_000)).toBe(expected);
    expect((await onlyRecord(account.id)).costMicros).toBe(expected);
  });
});

describe('an account’s own price multiplier', () => {
  it('scales its prices beside its tier’s, from its next request on', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10, tier: 'marked' });
    await new Commands(t.store).accounts.setPriceMultiplier(account.id, 800_000, { kind: 'cli', id: 'test' });
    await t.syncChanges();
    const completion = await t.client(apiKey).chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }] });
    // × 1.5 for the tier and × 0.8 for the account: × 1.2.
    const expected = costMicros(PRICES, OPENAI_KINDS, { tierPpm: 1_500_000, accountPpm: 800_000 });
    expect(Math.round((completion.usage as unknown as { cost: number }).cost * 1_000_000)).toBe(expected);
    expect((await onlyRecord(account.id)).costMicros).toBe(expected);
    // The dashboard's Models page shows the prices this account pays.
    const { token } = await new Sessions(t.store).start(account.id);
    const models = await jsonOf(await fetch(`${t.origin}/api/dashboard/models`, { headers: { cookie: `lmgate_session=${token}` } }));
    expect(models.models.find((model: { id: string }) => model.id === 'gpt-like').price).toEqual({
      inputPerMillion: 3.6,
      cachedInputPerMillion: 0.36,
      cacheWritePerMillion: 4.5,
      cacheWrite1hPerMillion: 7.2,
      outputPerMillion: 18,
      reasoningPerMillion: 24,
    });
  });
});

describe('token kinds from an Anthropic upstream', () => {
  const cache = { read: 1_000, written: 300, written1h: 100 };
  // input_tokens (211) beside cache reads and writes: lmgate's prompt total holds all three.
  const kinds: Usage = { promptTokens: 211 + 1_000 + 300, completionTokens: 37, cachedTokens: 1_000, cacheWriteTokens: 200, cacheWrite1hTokens: 100 };

  it('charges cache reads and 5-minute and 1-hour writes each at its price, on chat completions', async () => {
    anthropic.behave({ cache });
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const completion = await t.client(apiKey).chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.usage).toMatchObject({ prompt_tokens: 1_511, completion_tokens: 37, prompt_tokens_details: { cached_tokens: 1_000, cache_write_tokens: 300 } });
    const record = await onlyRecord(account.id);
    expect(record).toMatchObject({ promptTokens: 1_511, cachedTokens: 1_000, cacheWriteTokens: 200, cacheWrite1hTokens: 100, costMicros: costMicros(PRICES, kinds) });
  });

  it('on /v1/messages the client’s request reaches the upstream as it is, cache_control included, and the usage comes back in Anthropic’s terms', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const client = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
    for (const stream of [false, true]) {
      anthropic.behave({ cache });
      const request: Anthropic.MessageCreateParamsNonStreaming = {
        model: 'claude',
        max_tokens: 100,
        system: [{ type: 'text', text: 'A long shared preamble.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }] }],
      };
      const message = stream ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
      const sent = anthropic.requests.at(-1)!.body;
      expect(sent.system).toEqual(request.system);
      expect(sent.messages).toEqual(request.messages);
      expect(sent.model).toBe('claude-x');
      expect(message.usage).toMatchObject({ input_tokens: 211, cache_read_input_tokens: 1_000, cache_creation_input_tokens: 300, output_tokens: 37 });
    }
    await t.flushUsage();
    const records = await t.store.listUsage(account.id);
    expect(records).toHaveLength(2);
    for (const record of records) expect(record).toMatchObject({ cachedTokens: 1_000, cacheWriteTokens: 200, cacheWrite1hTokens: 100, costMicros: costMicros(PRICES, kinds) });
  });

  it('count_tokens asks the Anthropic upstream, and estimates when it cannot answer', async () => {
    const { apiKey } = await t.createAccount({ credits: 10 });
    const client = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
    const request = { model: 'claude', system: 'Be brief.', messages: [{ role: 'user' as const, content: 'hi' }] };
    expect((await client.messages.countTokens(request)).input_tokens).toBe(ANTHROPIC_COUNT);
    const asked = anthropic.requests.at(-1)!;
    expect(asked.url).toBe('/v1/messages/count_tokens');
    expect(asked.body).toEqual({ model: 'claude-x', system: 'Be brief.', messages: request.messages });
    anthropic.behave({ status: 529 });
    const estimated = (await client.messages.countTokens(request)).input_tokens;
    expect(estimated).not.toBe(ANTHROPIC_COUNT);
    expect(estimated).toBeGreaterThan(0);
    anthropic.behave({});
  });

  it('a stop sequence met upstream is reported as one, whole and streamed', async () => {
    anthropic.behave({ stopReason: 'stop_sequence', stopSequence: '###' });
    const { apiKey } = await t.createAccount({ credits: 10 });
    const client = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
    const request = { model: 'claude', max_tokens: 100, stop_sequences: ['###'], messages: [{ role: 'user' as const, content: 'count' }] };
    const whole = await client.messages.create(request);
    expect(whole).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: '###' });
    anthropic.behave({});
  });
});

describe('the demo models', () => {
  it('n=3 with max_tokens=10 is charged for every choice, exactly', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const completion = await t.client(apiKey).chat.completions.create({ model: 'priced-lorem', messages: [{ role: 'user', content: 'Tell me something.' }], n: 3, max_tokens: 10 });
    expect(completion.choices).toHaveLength(3);
    expect(completion.usage!.completion_tokens).toBe(30);
    const prices = { ...PRICES, inputPerMTokMicros: 1_000_000_000, cachedInputPerMTokMicros: 1_000_000_000, cacheWritePerMTokMicros: 1_000_000_000, cacheWrite1hPerMTokMicros: 1_000_000_000, outputPerMTokMicros: 3_000_000_000, reasoningPerMTokMicros: 3_000_000_000 };
    const expected = costMicros(prices, { promptTokens: completion.usage!.prompt_tokens, completionTokens: 30 });
    expect(Math.round((completion.usage as unknown as { cost: number }).cost * 1_000_000)).toBe(expected);
    const record = await onlyRecord(account.id);
    expect(record.costMicros).toBe(expected);
    // The hold covered all three choices.
    expect(record.heldMicros).toBeGreaterThanOrEqual(expected);
  });

  it('a stop sequence met by a demo model is reported as one on /v1/messages', async () => {
    const { apiKey } = await t.createAccount({ credits: 10 });
    const client = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0 });
    const request = { model: 'priced-echo', max_tokens: 100, stop_sequences: ['STOP'], messages: [{ role: 'user' as const, content: 'one two STOP three' }] };
    const whole = await client.messages.create(request);
    expect(whole).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP', content: [{ type: 'text', text: 'one two ' }] });
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'STOP' });
    // Without one, the model ended its turn.
    const plain = await client.messages.create({ ...request, stop_sequences: ['nowhere'] });
    expect(plain).toMatchObject({ stop_reason: 'end_turn', stop_sequence: null });
  });
});

describe('charging what was served', () => {
  it('an upstream that reports far more than the hold is charged in full from the balance', async () => {
    // 50,000 prompt tokens reported for a prompt lmgate counts at a handful.
    const big = { prompt_tokens: 50_000, completion_tokens: 10, total_tokens: 50_010 };
    openai.behave({ usage: big });
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const completion = await t.client(apiKey).chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    const expected = costMicros(PRICES, { promptTokens: 50_000, completionTokens: 10 });
    expect(Math.round((completion.usage as unknown as { cost: number }).cost * 1_000_000)).toBe(expected);
    const record = await onlyRecord(account.id);
    expect(record.heldMicros).toBeLessThan(expected);
    expect(record).toMatchObject({ costMicros: expected, shortfallMicros: 0 });
    expect(await t.store.balanceOf(account.id)).toBe(10_000_000 - expected);
    openai.behave({ usage: OPENAI_USAGE });
  });

  it('an account that cannot pay is charged its balance, to 0, and the record and /metrics say what was left unpaid', async () => {
    const big = { prompt_tokens: 50_000, completion_tokens: 10, total_tokens: 50_010 };
    openai.behave({ usage: big });
    const { account, apiKey } = await t.createAccount({ credits: 0.1 });
    const before = await metric('lmgate_charges_capped_total');
    // gpt-like has learned how much this upstream counts, and would hold for it: 402.
    await expect(t.client(apiKey).chat.completions.create({ model: 'gpt-like', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 })).rejects.toMatchObject({ status: 402 });
    await t.client(apiKey).chat.completions.create({ model: 'gpt-fresh', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 });
    const expected = costMicros(PRICES, { promptTokens: 50_000, completionTokens: 10 });
    const record = await onlyRecord(account.id);
    expect(record).toMatchObject({ costMicros: expected, shortfallMicros: expected - 100_000, outcome: 'completed' });
    expect(await t.store.balanceOf(account.id)).toBe(0);
    expect(await t.store.sumLedger(account.id)).toBe(0);
    expect(await metric('lmgate_charges_capped_total')).toBe(before + 1);
    openai.behave({ usage: OPENAI_USAGE });
  });
});

describe('answers cut short', () => {
  it('an upstream that fails mid-stream: the client that asked for usage gets its charge before the error, and the record says how it ended', async () => {
    openai.behave({ dropAfterChunks: 2 });
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const stream = await t.client(apiKey).chat.completions.create({ model: 'gpt-fresh', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    const usages: { cost: number; completion_tokens: number }[] = [];
    const failure = await (async () => {
      for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage as unknown as { cost: number; completion_tokens: number });
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(usages).toHaveLength(1);
    const record = await onlyRecord(account.id);
    expect(record).toMatchObject({ outcome: 'upstream_failed', basis: 'counted', status: 502 });
    expect(record.completionTokens).toBe(usages[0]!.completion_tokens);
    expect(Math.round(usages[0]!.cost * 1_000_000)).toBe(record.costMicros);
    expect(record.costMicros).toBeGreaterThan(0);
    openai.behave({ usage: OPENAI_USAGE });
  });

  it('a client that leaves mid-stream: charged for what it was sent, the record says the client went', async () => {
    openai.behave({ chunkDelayMs: 50, pieces: ['one ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven ', 'eight '] });
    const { account, apiKey } = await t.createAccount({ credits: 10 });
    const controller = new AbortController();
    const stream = await t.client(apiKey).chat.completions.create(
      { model: 'gpt-fresh', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { signal: controller.signal },
    );
    let seen = 0;
    await (async () => {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content && ++seen === 2) controller.abort();
      }
    })().catch(() => undefined);
    let records = await t.store.listUsage(account.id);
    for (let i = 0; records.length === 0 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await t.flushUsage();
      records = await t.store.listUsage(account.id);
    }
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: 'client_gone', basis: 'counted', status: 499 });
    expect(records[0]!.completionTokens).toBeGreaterThan(0);
    expect(records[0]!.costMicros).toBe(costMicros(PRICES, { promptTokens: records[0]!.promptTokens, completionTokens: records[0]!.completionTokens }));
    openai.behave({ usage: OPENAI_USAGE });
  });
});

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${t.origin}/metrics`)).text();
  const line = text.split('\n').find((each) => each.startsWith(`${name} `) || each.startsWith(`${name}{`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('the catalogue', () => {
  it('shows every price of a model, the defaults filled in', async () => {
    const { apiKey } = await t.createAccount({ credits: 1 });
    const listed = await jsonOf(await fetch(`${t.baseURL}/models/gpt-like`, { headers: { authorization: `Bearer ${apiKey}` } }));
    expect(listed.pricing).toEqual({ ...PRICE, unit: 'credits per 1M tokens' });
    const echo = await jsonOf(await fetch(`${t.baseURL}/models/priced-echo`, { headers: { authorization: `Bearer ${apiKey}` } }));
    expect(echo.pricing).toEqual({ input: 1_000, cached_input: 1_000, cache_write: 1_000, cache_write_1h: 1_000, output: 3_000, reasoning: 3_000, unit: 'credits per 1M tokens' });
  });
});
