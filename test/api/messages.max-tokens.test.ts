// Anthropic's clients always send max_tokens, sized for Claude models: Claude Code asks
// for 32,000. On /v1/messages a max_tokens above the model's output limit asks for that
// limit: answered, reserved and sent upstream as the limit. /v1/chat/completions keeps the
// spec's 422 for it. Driven with the official @anthropic-ai/sdk and openai clients.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../../src/billing/pricing.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { settledUsage } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const CLAUDE_CODE_MAX_TOKENS = 32_000;
const OUTPUT_LIMIT = 8_192;
const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };

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
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: OUTPUT_LIMIT, price: { input: 1, output: 2 } },
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

async function account(credits: number): Promise<{ id: string; apiKey: string; client: Anthropic }> {
  const { account: created, apiKey } = await t.createAccount({ credits });
  return { id: created.id, apiKey, client: new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0, timeout: 20_000 }) };
}

describe('POST /v1/messages with max_tokens above the model’s output limit', () => {
  it('is answered, whole and streamed, and charged as its usage says', async () => {
    const { id, client } = await account(10);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Hello from Claude Code' }];
    const message = await client.messages.create({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages });
    expect(message).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from Claude Code' }], stop_reason: 'end_turn' });
    const final = await client.messages.stream({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages }).finalMessage();
    expect(final.content).toMatchObject([{ type: 'text', text: 'Hello from Claude Code' }]);

    const records = await settledUsage(t, id);
    expect(records).toHaveLength(2);
    for (const record of records) expect(record).toMatchObject({ status: 200, costMicros: costMicros(PRICES, record.promptTokens, record.completionTokens) });
    expect(await t.store.balanceOf(id)).toBe(10_000_000 - records.reduce((sum, record) => sum + record.costMicros, 0));
  });

  it('reserves for the model’s limit: a balance that covers the limit but not max_tokens is enough', async () => {
    // 8,192 output tokens at 2 credits a million are 0.016384 credits; 32,000 would be 0.064.
    const { client } = await account(0.03);
    const message = await client.messages.create({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('asks an upstream for the model’s limit, OpenAI’s and Anthropic’s alike', async () => {
    const { client } = await account(10);
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'hi' }];
    const seenOpenAI = openaiUpstream.requests.length;
    await client.messages.create({ model: 'llama', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages });
    expect(openaiUpstream.requests[seenOpenAI]!.body.max_tokens).toBe(OUTPUT_LIMIT);
    const seenAnthropic = anthropicUpstream.requests.length;
    await client.messages.stream({ model: 'claude', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages }).finalMessage();
    expect(anthropicUpstream.requests[seenAnthropic]!.body.max_tokens).toBe(OUTPUT_LIMIT);
    // Within the limit, the client's own value goes out.
    await client.messages.create({ model: 'claude', max_tokens: 100, messages });
    expect(anthropicUpstream.requests.at(-1)!.body.max_tokens).toBe(100);
  });
});

describe('POST /v1/chat/completions with max_tokens above the model’s output limit', () => {
  it('keeps the spec’s 422 naming max_tokens', async () => {
    const { apiKey } = await account(10);
    const err = await t
      .client(apiKey)
      .chat.completions.create({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect((err as InstanceType<typeof OpenAI.UnprocessableEntityError>).error).toMatchObject({ code: 422, message: 'Validation failed' });
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', max_tokens: CLAUDE_CODE_MAX_TOKENS, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(((await res.json()) as { errors: unknown }).errors).toEqual({ max_tokens: [`must be <= ${OUTPUT_LIMIT} for this model`] });
  });
});
