// Each upstream fault, seen through the official openai client against a real lmgate:
// what the client gets (retry and success, 502/503/504, an error event mid-stream) and
// exactly what the account is charged.
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { countTextTokens } from '../../src/models/tokens.js';
import type { UsageRecord } from '../../src/store/store.js';
import { DEFAULT_PIECES, FAKE_USAGE, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };
const START_MICROS = 10_000_000;
const MESSAGES = [{ role: 'user' as const, content: 'Tell me something.' }];

let t: TestApp;
let primary: FakeUpstream;
let secondary: FakeUpstream;

beforeAll(async () => {
  primary = await startFakeUpstream();
  secondary = await startFakeUpstream();
  // Breakers that never open here: every test starts from healthy deployments.
  const breaker = { failures: 1000 };
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        solo: {
          price: { input: 1, output: 2 },
          deployments: [{ url: primary.url, model: 'solo-upstream', circuit_breaker: breaker, timeouts: { first_byte_ms: 300, idle_ms: 400, total_ms: 1500 } }],
        },
        pair: {
          price: { input: 1, output: 2 },
          deployments: [
            { url: primary.url, model: 'pair-primary', weight: 1_000_000, circuit_breaker: breaker },
            { url: secondary.url, model: 'pair-secondary', weight: 1, circuit_breaker: breaker },
          ],
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await primary.close();
  await secondary.close();
});
beforeEach(() => {
  primary.behave({});
  secondary.behave({});
});

async function account(): Promise<{ id: string; client: OpenAI }> {
  const { account: created, apiKey } = await t.createAccount({ credits: START_MICROS / 1_000_000 });
  return { id: created.id, client: t.client(apiKey) };
}

/** The account's one usage record, once the writer has stored it. */
async function onlyRecord(accountId: string): Promise<UsageRecord> {
  await t.flushUsage();
  const records = await t.store.listUsage(accountId);
  expect(records).toHaveLength(1);
  return records[0]!;
}

async function expectCharged(accountId: string, record: UsageRecord): Promise<void> {
  expect(record.costMicros).toBe(costMicros(PRICES, record.promptTokens, record.completionTokens));
  expect(await t.store.balanceOf(accountId)).toBe(START_MICROS - record.costMicros);
}

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  return err as APIError;
}

describe('before the first byte', () => {
  it('a 500 from one deployment: retried on the other, answered and charged once', async () => {
    const { id, client } = await account();
    primary.behave({ status: 500 });
    const before = secondary.requests.length;
    const completion = await client.chat.completions.create({ model: 'pair', messages: MESSAGES });
    expect(completion.choices[0]!.message.content).toBe(DEFAULT_PIECES.join(''));
    expect(secondary.requests.length).toBe(before + 1);
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ status: 200, promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens });
    await expectCharged(id, record);
  });

  it('a 429 with Retry-After: retried on the other deployment, streamed', async () => {
    const { client } = await account();
    primary.behave({ status: 429, retryAfter: '1' });
    const stream = await client.chat.completions.create({ model: 'pair', messages: MESSAGES, stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe(DEFAULT_PIECES.join(''));
    expect(secondary.requests.at(-1)!.body.model).toBe('pair-secondary');
  });

  it('a 500 from every deployment: 502, nothing charged', async () => {
    const { id, client } = await account();
    primary.behave({ status: 500 });
    secondary.behave({ status: 503 });
    const err = await failure(client.chat.completions.create({ model: 'pair', messages: MESSAGES }));
    expect(err.status).toBe(502);
    expect(await onlyRecord(id)).toMatchObject({ status: 502, costMicros: 0 });
    expect(await t.store.balanceOf(id)).toBe(START_MICROS);
  });

  it('malformed JSON: 502', async () => {
    const { client } = await account();
    primary.behave({ malformed: true });
    const err = await failure(client.chat.completions.create({ model: 'solo', messages: MESSAGES }));
    expect(err.status).toBe(502);
  });

  it('a first byte slower than the limit: 504, streamed or not', async () => {
    const { id, client } = await account();
    primary.behave({ firstByteDelayMs: 2000 });
    expect((await failure(client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true }))).status).toBe(504);
    expect((await failure(client.chat.completions.create({ model: 'solo', messages: MESSAGES }))).status).toBe(504);
    await t.flushUsage();
    expect(await t.store.balanceOf(id)).toBe(START_MICROS);
  });
});

describe('after the first byte', () => {
  it('a dropped stream: the chunks so far, then an error event; charged for what was delivered', async () => {
    const { id, client } = await account();
    primary.behave({ dropAfterChunks: 2 });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true });
    let content = '';
    const err = await failure(
      (async () => {
        for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    expect(err.message).toBe('The model backend returned an invalid response.');
    expect(content).toBe(DEFAULT_PIECES.slice(0, 2).join(''));
    const record = await onlyRecord(id);
    expect(record.status).toBe(502);
    expect(record.completionTokens).toBe(countTextTokens(content));
    await expectCharged(id, record);
  });

  it('a malformed event mid-stream ends it with an error event', async () => {
    const { id, client } = await account();
    primary.behave({ malformed: true });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true });
    let content = '';
    await failure(
      (async () => {
        for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    expect(content).toBe(DEFAULT_PIECES[0]);
    expect((await onlyRecord(id)).status).toBe(502);
  });

  it('an upstream that goes quiet longer than the idle limit: error event with 504', async () => {
    const { id, client } = await account();
    primary.behave({ chunkDelayMs: 1000 });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true });
    await failure(
      (async () => {
        for await (const chunk of stream) void chunk;
      })(),
    );
    expect((await onlyRecord(id)).status).toBe(504);
  });
});

describe('answers that are odd but whole', () => {
  it('no usage in the stream: charged by lmgate’s own count, and the client still gets a usage chunk', async () => {
    const { id, client } = await account();
    primary.behave({ noUsage: true });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    let content = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    const record = await onlyRecord(id);
    expect(record.completionTokens).toBe(countTextTokens(content));
    expect(usage).toMatchObject({ prompt_tokens: record.promptTokens, completion_tokens: record.completionTokens });
    await expectCharged(id, record);
  });

  it('huge chunks arrive whole', async () => {
    const { client } = await account();
    const pieces = ['a'.repeat(1024 * 1024), 'b'.repeat(512 * 1024)];
    primary.behave({ pieces });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true });
    const received: string[] = [];
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content;
      if (text) received.push(text);
    }
    expect(received.map((text) => text.length)).toEqual(pieces.map((piece) => piece.length));
  });

  it('a slow trickle within the idle limit streams to the end', async () => {
    const { id, client } = await account();
    primary.behave({ chunkDelayMs: 150 });
    const stream = await client.chat.completions.create({ model: 'solo', messages: MESSAGES, stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe(DEFAULT_PIECES.join(''));
    expect((await onlyRecord(id)).status).toBe(200);
  });
});
