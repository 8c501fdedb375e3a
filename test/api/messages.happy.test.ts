// POST /v1/messages, Anthropic's Messages API, driven with the official @anthropic-ai/sdk:
// a demo model, an OpenAI upstream and an Anthropic upstream behind it, whole and
// streamed, with tools; every charge equal to its usage record; and max_tokens above the
// model's output limit, as Claude Code sends it, asking for that limit.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { countTextTokens } from '../../src/models/tokens.js';
import type { UsageRecord } from '../../src/store/store.js';
import { ANTHROPIC_PIECES, ANTHROPIC_USAGE, startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { DEFAULT_PIECES, FAKE_USAGE, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { readWords, settledUsage } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };
const START_MICROS = 10_000_000;
const WEATHER: Anthropic.Tool = { name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const TOOL_USE = { id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris' } };
/** The max_tokens Claude Code sends, above every model's output limit here. */
const CLAUDE_CODE_MAX_TOKENS = 32_000;
const OUTPUT_LIMIT = 8_192;

let t: TestApp;
let openaiUpstream: FakeUpstream;
let anthropicUpstream: FakeAnthropic;

beforeAll(async () => {
  openaiUpstream = await startFakeUpstream();
  anthropicUpstream = await startFakeAnthropic();
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', max_output: OUTPUT_LIMIT, price: { input: 1, output: 2 } },
        llama: { max_output: OUTPUT_LIMIT, price: { input: 1, output: 2 }, deployments: [{ url: openaiUpstream.url, model: 'llama-upstream' }] },
        claude: { max_output: OUTPUT_LIMIT, price: { input: 1, output: 2 }, deployments: [{ kind: 'anthropic', url: anthropicUpstream.url, model: 'claude-upstream' }] },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await openaiUpstream.close();
  await anthropicUpstream.close();
});
beforeEach(() => {
  openaiUpstream.behave({});
  anthropicUpstream.behave({});
});

async function account(): Promise<{ id: string; client: Anthropic; apiKey: string }> {
  const { account: created, apiKey } = await t.createAccount({ credits: START_MICROS / 1_000_000 });
  return { id: created.id, apiKey, client: new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0, timeout: 20_000 }) };
}

async function onlyRecord(accountId: string): Promise<UsageRecord> {
  let records = await t.store.listUsage(accountId);
  for (let i = 0; i < 200 && records.length === 0; i++) {
    await t.flushUsage();
    records = await t.store.listUsage(accountId);
    if (records.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(records).toHaveLength(1);
  return records[0]!;
}

async function expectCharged(accountId: string, record: UsageRecord): Promise<void> {
  expect(record.costMicros).toBe(costMicros(PRICES, record.promptTokens, record.completionTokens));
  expect(record.costMicros).toBeGreaterThan(0);
  expect(await t.store.balanceOf(accountId)).toBe(START_MICROS - record.costMicros);
}

describe('a demo model', () => {
  it('messages.create answers in Anthropic’s shape, with its usage the record’s and the charge', async () => {
    const { id, client } = await account();
    const message: Anthropic.Message = await client.messages.create({
      model: 'demo-echo',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello, Claude' }],
    });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'demo-echo', content: [{ type: 'text', text: 'Hello, Claude' }], stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    const record = await onlyRecord(id);
    expect(message.usage).toEqual({ input_tokens: record.promptTokens, output_tokens: record.completionTokens });
    expect(record).toMatchObject({ model: 'demo-echo', status: 200, streamed: false });
    await expectCharged(id, record);
  });

  it('streamed, the SDK’s stream yields Anthropic’s events and its final message adds up', async () => {
    const { id, client } = await account();
    const stream = client.messages.stream({ model: 'demo-echo', max_tokens: 100, messages: [{ role: 'user', content: 'Stream me, please' }] });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    const final = await stream.finalMessage();
    expect(text).toBe('Stream me, please');
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(types).toContain('content_block_start');
    expect(types).toContain('content_block_stop');
    expect(final).toMatchObject({ content: [{ type: 'text', text: 'Stream me, please' }], stop_reason: 'end_turn' });
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ status: 200, streamed: true });
    expect(final.usage).toMatchObject({ input_tokens: record.promptTokens, output_tokens: record.completionTokens });
    await expectCharged(id, record);
  });

  it('a Bearer key works as well as x-api-key, on every base address', async () => {
    const { apiKey } = await account();
    for (const base of ['/v1', '/api/v1']) {
      const res = await fetch(`${t.origin}${base}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      // Anthropic's SDKs read the request id from `request-id`.
      expect(res.headers.get('request-id')).toBe(res.headers.get('x-request-id'));
      expect(((await res.json()) as Anthropic.Message).content).toEqual([{ type: 'text', text: 'hi' }]);
    }
  });
});

describe('an OpenAI upstream', () => {
  it('the request goes out as a chat completion; the answer and its usage come back in Anthropic’s shape', async () => {
    const { id, client } = await account();
    const seen = openaiUpstream.requests.length;
    const message = await client.messages.create({
      model: 'llama',
      max_tokens: 200,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [WEATHER],
      tool_choice: { type: 'auto' },
      stop_sequences: ['###'],
    });
    expect(message.content).toEqual([{ type: 'text', text: DEFAULT_PIECES.join('') }]);
    expect(message.usage).toEqual({ input_tokens: FAKE_USAGE.prompt_tokens, output_tokens: FAKE_USAGE.completion_tokens });
    expect(openaiUpstream.requests[seen]!.body).toMatchObject({
      model: 'llama-upstream',
      max_tokens: 200,
      stop: ['###'],
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather in a city', parameters: WEATHER.input_schema } }],
      tool_choice: 'auto',
    });
    await expectCharged(id, await onlyRecord(id));
  });
});

describe('an Anthropic upstream, with tools', () => {
  it('a tool_use comes back as a tool_use, and a tool_result goes out as one', async () => {
    const { id, client } = await account();
    anthropicUpstream.behave({ toolUse: TOOL_USE });
    const message = await client.messages.create({ model: 'claude', max_tokens: 300, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER] });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'text', text: ANTHROPIC_PIECES.join('') }, { type: 'tool_use', ...TOOL_USE }]);
    // Anthropic's own terms, the cache read beside the plain input, as the upstream reported them.
    expect(message.usage).toEqual({ ...ANTHROPIC_USAGE, cache_creation_input_tokens: 0 });
    await expectCharged(id, await onlyRecord(id));

    anthropicUpstream.behave({});
    await client.messages.create({
      model: 'claude',
      max_tokens: 300,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: message.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: TOOL_USE.id, content: '18°C' }] },
      ],
    });
    expect(anthropicUpstream.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'text', text: ANTHROPIC_PIECES.join('') }, { type: 'tool_use', ...TOOL_USE }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: TOOL_USE.id, content: '18°C' }] },
    ]);
  });

  it('streamed, the tool call’s input arrives as input_json_delta and the SDK parses it', async () => {
    const { id, client } = await account();
    anthropicUpstream.behave({ toolUse: TOOL_USE });
    const stream = client.messages.stream({ model: 'claude', max_tokens: 300, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER] });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      { type: 'text', text: ANTHROPIC_PIECES.join('') },
      { type: 'tool_use', ...TOOL_USE },
    ]);
    expect(final.stop_reason).toBe('tool_use');
    const record = await onlyRecord(id);
    expect(final.usage).toMatchObject({ input_tokens: record.promptTokens - record.cachedTokens, cache_read_input_tokens: record.cachedTokens, output_tokens: record.completionTokens });
    await expectCharged(id, record);
  });
});

describe('max_tokens above the model’s output limit, as Claude Code sends it', () => {
  it('is answered, whole and streamed, and charged as its usage says', async () => {
    const { id, client } = await account();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello from Claude Code' }];
    const message = await client.messages.create({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages });
    expect(message).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from Claude Code' }], stop_reason: 'end_turn' });
    const final = await client.messages.stream({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages }).finalMessage();
    expect(final.content).toMatchObject([{ type: 'text', text: 'Hello from Claude Code' }]);

    const records = await settledUsage(t, id);
    expect(records).toHaveLength(2);
    for (const record of records) expect(record).toMatchObject({ status: 200, costMicros: costMicros(PRICES, record.promptTokens, record.completionTokens) });
    expect(await t.store.balanceOf(id)).toBe(START_MICROS - records.reduce((sum, record) => sum + record.costMicros, 0));
  });

  it('reserves for the model’s limit: a balance that covers the limit but not max_tokens is enough', async () => {
    // 8,192 output tokens at 2 credits a million are 0.016384 credits; 32,000 would be 0.064.
    const { apiKey } = await t.createAccount({ credits: 0.03 });
    const client = new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0, timeout: 20_000 });
    const message = await client.messages.create({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('asks an upstream for the model’s limit, OpenAI’s and Anthropic’s alike; within the limit the client’s own value goes out', async () => {
    const { client } = await account();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'hi' }];
    const seenOpenAI = openaiUpstream.requests.length;
    await client.messages.create({ model: 'llama', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages });
    expect(openaiUpstream.requests[seenOpenAI]!.body.max_tokens).toBe(OUTPUT_LIMIT);
    const seenAnthropic = anthropicUpstream.requests.length;
    await client.messages.stream({ model: 'claude', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages }).finalMessage();
    expect(anthropicUpstream.requests[seenAnthropic]!.body.max_tokens).toBe(OUTPUT_LIMIT);
    await client.messages.create({ model: 'claude', max_tokens: 100, messages });
    expect(anthropicUpstream.requests.at(-1)!.body.max_tokens).toBe(100);
  });

  it('on /v1/chat/completions stays the spec’s 422 naming max_tokens', async () => {
    const { apiKey } = await account();
    const body = { model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages: [{ role: 'user' as const, content: 'hi' }] };
    const err = await t.client(apiKey).chat.completions.create(body).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { errors: unknown }).errors).toEqual({ max_tokens: [`must be <= ${OUTPUT_LIMIT} for this model`] });
  });
});

describe('a client that leaves', () => {
  it('disconnecting mid-stream aborts the upstream call and pays for what was delivered', async () => {
    const { id, apiKey } = await account();
    anthropicUpstream.behave({ pieces: Array.from({ length: 200 }, (_, i) => ` word${i}`), deltaDelayMs: 20 });
    const seen = anthropicUpstream.requests.length;
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/messages`, {
      method: 'POST',
      signal: controller.signal,
      headers: { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', max_tokens: 1000, stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const received = await readWords(res, 3);
    expect(received).toMatch(/^event: message_start\ndata: /);
    controller.abort();

    expect(await anthropicUpstream.requests[seen]!.closed).toBe(true);
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ status: 499, streamed: true });
    expect(record.completionTokens).toBeGreaterThanOrEqual(3 * countTextTokens(' word0'));
    expect(record.completionTokens).toBeLessThan(200 * countTextTokens(' word0'));
    await expectCharged(id, record);
  });
});
