// POST /v1/messages/count_tokens, driven with the official @anthropic-ai/sdk: the prompt's
// tokens as /messages counts (and bills) them, for nothing; refusals in Anthropic's shape.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';

const START_MICROS = 10_000_000;
const REQUEST = {
  model: 'demo-echo',
  system: 'You are terse.',
  messages: [
    { role: 'user' as const, content: 'What is the capital of France?' },
    { role: 'assistant' as const, content: 'Paris.' },
    { role: 'user' as const, content: 'And of Italy, in a few more words than that?' },
  ],
};

let t: TestApp;

beforeAll(async () => {
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: { 'demo-echo': { backend: 'demo', kind: 'echo', price: { input: 1, output: 2 } } },
    },
  });
});
afterAll(async () => {
  await t.close();
});

async function account(): Promise<{ id: string; client: Anthropic }> {
  const { account: created, apiKey } = await t.createAccount({ credits: START_MICROS / 1_000_000 });
  return { id: created.id, client: new Anthropic({ apiKey, baseURL: t.origin, maxRetries: 0, timeout: 20_000 }) };
}

describe('POST /v1/messages/count_tokens', () => {
  it('counts the prompt as /messages bills it, and charges nothing', async () => {
    const { id, client } = await account();
    const counted = await client.messages.countTokens(REQUEST);
    expect(counted.input_tokens).toBeGreaterThan(0);
    await t.flushUsage();
    expect(await t.store.listUsage(id)).toHaveLength(0);
    expect(await t.store.balanceOf(id)).toBe(START_MICROS);

    const message = await client.messages.create({ ...REQUEST, max_tokens: 50 });
    expect(counted.input_tokens).toBe(message.usage.input_tokens);
  });

  it('a longer prompt counts more', async () => {
    const { client } = await account();
    const short = await client.messages.countTokens({ model: 'demo-echo', messages: [{ role: 'user', content: 'Hi' }] });
    const long = await client.messages.countTokens({ model: 'demo-echo', messages: [{ role: 'user', content: 'Hi '.repeat(200) }] });
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 100);
  });

  it('refuses in Anthropic shape: no key, an unknown model, an invalid body', async () => {
    const { client } = await account();
    const anonymous = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: t.origin, maxRetries: 0 });
    await expect(anonymous.messages.countTokens(REQUEST)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    await expect(client.messages.countTokens({ ...REQUEST, model: 'no-such-model' })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const invalid = await client.messages.countTokens({ model: 'demo-echo', messages: [] }).catch((err: unknown) => err);
    expect(invalid).toBeInstanceOf(Anthropic.UnprocessableEntityError);
    expect((invalid as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
