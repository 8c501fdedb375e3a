// /v1/completions, /v1/responses and /v1/embeddings with the official openai client, on
// demo models and through a fake upstream speaking OpenAI's wire format: body shapes,
// charges equal to the usage records, and the catalogue's endpoints.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { countTextTokens } from '../../src/models/tokens.js';
import { DEFAULT_PIECES, FAKE_EMBEDDING_TOKENS, FAKE_USAGE, FAKE_VECTOR, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };
const ANSWER = DEFAULT_PIECES.join('');

let t: TestApp;
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 1, output: 2 } },
        'demo-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 0, price: { input: 1, output: 2 } },
        'demo-embed': { backend: 'demo', kind: 'embedding', dimensions: 64, price: { input: 1, output: 0 } },
        'up-chat': { price: { input: 1, output: 2 }, deployments: [{ url: upstream.url, model: 'upstream-chat' }] },
        'up-embed': { endpoints: ['embeddings'], price: { input: 1, output: 0 }, deployments: [{ url: upstream.url, model: 'upstream-embed' }] },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
});

/** A new account's client, and what it was charged and recorded once the usage is written. */
async function account(): Promise<{ client: OpenAI; bill: () => Promise<{ chargedMicros: number; records: Awaited<ReturnType<TestApp['store']['listUsage']>> }> }> {
  const { account, apiKey } = await t.createAccount({ credits: 10 });
  return {
    client: t.client(apiKey),
    async bill() {
      await t.flushUsage();
      const records = await t.store.listUsage(account.id);
      return { chargedMicros: 10_000_000 - (await t.store.balanceOf(account.id)), records };
    },
  };
}

function dot(a: number[], b: number[]): number {
  return a.reduce((sum, value, i) => sum + value * b[i]!, 0);
}

describe('POST /v1/embeddings', () => {
  it('the demo model gives equal vectors for equal texts, each of length 1, and charges the input tokens', async () => {
    const { client, bill } = await account();
    const texts = ['the quick brown fox', 'the quick brown fox', 'an entirely different sentence'];
    const result = await client.embeddings.create({ model: 'demo-embed', input: texts, encoding_format: 'float' });
    expect(result.object).toBe('list');
    expect(result.model).toBe('demo-embed');
    expect(result.data.map((d) => [d.object, d.index])).toEqual([['embedding', 0], ['embedding', 1], ['embedding', 2]]);
    const [a, b, c] = result.data.map((d) => d.embedding);
    expect(a).toHaveLength(64);
    expect(a).toEqual(b);
    expect(dot(a!, a!)).toBeCloseTo(1, 10);
    expect(dot(a!, c!)).toBeLessThan(0.9);
    const tokens = texts.reduce((sum, text) => sum + countTextTokens(text), 0);
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });

    const { chargedMicros, records } = await bill();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ model: 'demo-embed', promptTokens: tokens, completionTokens: 0, status: 200, costMicros: chargedMicros });
    expect(chargedMicros).toBe(costMicros(PRICES, tokens, 0));
  });

  it('base64 (the client’s default) decodes to the float vector; dimensions gives shorter vectors of length 1 that still hold the words; token arrays count their ids', async () => {
    const { client } = await account();
    const floats = await client.embeddings.create({ model: 'demo-embed', input: 'hello world', encoding_format: 'float' });
    const viaBase64 = await client.embeddings.create({ model: 'demo-embed', input: 'hello world' });
    expect(viaBase64.data[0]!.embedding).toHaveLength(64);
    viaBase64.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(floats.data[0]!.embedding[i]!, 6));

    const short = await client.embeddings.create({ model: 'demo-embed', input: 'hello world', dimensions: 8, encoding_format: 'float' });
    expect(short.data[0]!.embedding).toHaveLength(8);
    expect(dot(short.data[0]!.embedding, short.data[0]!.embedding)).toBeCloseTo(1, 10);
    expect(short.data[0]!.embedding.filter((value) => value !== 0).length).toBeGreaterThan(1);

    const tokens = await client.embeddings.create({ model: 'demo-embed', input: [[1, 2, 3], [4, 5]], encoding_format: 'float' });
    expect(tokens.data).toHaveLength(2);
    expect(tokens.usage.prompt_tokens).toBe(5);
  });

  it('a large request (embedded in slices that hand the event loop back) gives the vectors small ones give', async () => {
    const { client } = await account();
    const texts = Array.from({ length: 2048 }, (_, i) => `passage ${i} `.repeat(60));
    const large = await client.embeddings.create({ model: 'demo-embed', input: texts, encoding_format: 'float' });
    expect(large.data).toHaveLength(2048);
    const alone = await client.embeddings.create({ model: 'demo-embed', input: texts[2047]!, encoding_format: 'float' });
    expect(large.data[2047]!.embedding).toEqual(alone.data[0]!.embedding);
  });

  it('an upstream embedding deployment gets the request with its model name on /embeddings; its usage is charged', async () => {
    const { client, bill } = await account();
    const seen = upstream.requests.length;
    const result = await client.embeddings.create({ model: 'up-embed', input: ['a', 'b'], encoding_format: 'float' });
    expect(upstream.requests[seen]).toMatchObject({ url: '/v1/embeddings', body: { model: 'upstream-embed', input: ['a', 'b'] } });
    expect(result.model).toBe('up-embed');
    expect(result.data[1]!.embedding).toEqual(FAKE_VECTOR);
    expect(result.usage.prompt_tokens).toBe(FAKE_EMBEDDING_TOKENS);

    const viaBase64 = await client.embeddings.create({ model: 'up-embed', input: 'a' });
    viaBase64.data[0]!.embedding.forEach((value, i) => expect(value).toBeCloseTo(FAKE_VECTOR[i]!, 6));

    const { chargedMicros, records } = await bill();
    expect(records.map((r) => r.promptTokens)).toEqual([FAKE_EMBEDDING_TOKENS, FAKE_EMBEDDING_TOKENS]);
    // The charge never exceeds what was reserved for lmgate's own count of the input.
    expect(chargedMicros).toBe(records.reduce((sum, r) => sum + r.costMicros, 0));
    expect(chargedMicros).toBeGreaterThan(0);
    expect(chargedMicros).toBeLessThanOrEqual(2 * costMicros(PRICES, FAKE_EMBEDDING_TOKENS, 0));
  });
});

describe('POST /v1/completions', () => {
  it('echo answers the prompt as a text_completion, with usage charged as recorded', async () => {
    const { client, bill } = await account();
    const completion = await client.completions.create({ model: 'demo-echo', prompt: 'Say this is a test', max_tokens: 50 });
    expect(completion).toMatchObject({ object: 'text_completion', model: 'demo-echo' });
    expect(completion.id).toMatch(/^cmpl-/);
    expect(completion.choices).toEqual([{ text: 'Say this is a test', index: 0, logprobs: null, finish_reason: 'stop' }]);
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ promptTokens: completion.usage!.prompt_tokens, completionTokens: completion.usage!.completion_tokens, costMicros: chargedMicros });
    expect(chargedMicros).toBe(costMicros(PRICES, completion.usage!.prompt_tokens, completion.usage!.completion_tokens));
  });

  it('max_tokens defaults to 16, as OpenAI’s legacy API has it', async () => {
    const { client } = await account();
    const completion = await client.completions.create({ model: 'demo-lorem', prompt: 'go' });
    expect(completion.usage!.completion_tokens).toBe(16);
    expect(completion.choices[0]!.finish_reason).toBe('length');
  });

  it('streams text_completion chunks, with the usage chunk when asked', async () => {
    const { client, bill } = await account();
    const stream = await client.completions.create({ model: 'demo-echo', prompt: 'one two three', max_tokens: 20, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('text_completion');
      for (const choice of chunk.choices) {
        text += choice.text;
        finish = choice.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three');
    expect(finish).toBe('stop');
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ streamed: true, completionTokens: usage!.completion_tokens, costMicros: chargedMicros });
  });

  it('through an upstream: the prompt goes as a chat message to /chat/completions, the answer comes back as text', async () => {
    const { client, bill } = await account();
    const seen = upstream.requests.length;
    const completion = await client.completions.create({ model: 'up-chat', prompt: 'hi', max_tokens: 1000, temperature: 0.5 });
    expect(upstream.requests[seen]).toMatchObject({ url: '/v1/chat/completions', body: { model: 'upstream-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1000, temperature: 0.5 } });
    expect(completion.choices[0]!.text).toBe(ANSWER);
    expect(completion.usage).toMatchObject({ prompt_tokens: FAKE_USAGE.prompt_tokens, completion_tokens: FAKE_USAGE.completion_tokens });

    const stream = await client.completions.create({ model: 'up-chat', prompt: 'hi', max_tokens: 1000, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices.map((c) => c.text).join('');
    expect(text).toBe(ANSWER);
    const { chargedMicros, records } = await bill();
    expect(records).toHaveLength(2);
    expect(records.map((r) => r.costMicros)).toEqual([0, 1].map(() => costMicros(PRICES, FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens)));
    expect(chargedMicros).toBe(2 * costMicros(PRICES, FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens));
  });
});

describe('POST /v1/responses', () => {
  it('answers text input with one message of output_text, instructions echoed, usage in its own names', async () => {
    const { client, bill } = await account();
    const response = await client.responses.create({ model: 'demo-echo', instructions: 'be brief', input: 'Hello there', max_output_tokens: 50 });
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'demo-echo', instructions: 'be brief', max_output_tokens: 50, store: false, error: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output).toEqual([
      { id: expect.stringMatching(/^msg_/), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there', annotations: [], logprobs: [] }] },
    ]);
    expect(response.output_text).toBe('Hello there');
    const usage = response.usage!;
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ promptTokens: usage.input_tokens, completionTokens: usage.output_tokens, costMicros: chargedMicros });
    expect(chargedMicros).toBe(costMicros(PRICES, usage.input_tokens, usage.output_tokens));
  });

  it('takes message items; a cut answer is incomplete for max_output_tokens', async () => {
    const { client } = await account();
    const response = await client.responses.create({
      model: 'demo-echo',
      input: [
        { role: 'user', content: 'first' },
        { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'one two three four five six seven eight' }] },
      ],
      max_output_tokens: 3,
    });
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.usage!.output_tokens).toBe(3);
  });

  it('streams its typed events in order, ending with response.completed and its usage', async () => {
    const { client, bill } = await account();
    const stream = await client.responses.create({ model: 'demo-echo', input: 'alpha beta gamma', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.output_text.done') expect(event.text).toBe('alpha beta gamma');
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(text).toBe('alpha beta gamma');
    const deltas = types.filter((type) => type === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(completed!.status).toBe('completed');
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ streamed: true, promptTokens: completed!.usage!.input_tokens, completionTokens: completed!.usage!.output_tokens, costMicros: chargedMicros });
  });

  it('through an upstream, whole and streamed, translated to chat', async () => {
    const { client, bill } = await account();
    const seen = upstream.requests.length;
    const response = await client.responses.create({ model: 'up-chat', instructions: 'sys', input: 'hi', max_output_tokens: 1000 });
    expect(upstream.requests[seen]!.body).toMatchObject({ model: 'upstream-chat', max_tokens: 1000, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hi' }] });
    expect(response.output_text).toBe(ANSWER);
    expect(response.usage).toMatchObject({ input_tokens: FAKE_USAGE.prompt_tokens, output_tokens: FAKE_USAGE.completion_tokens });

    const stream = await client.responses.create({ model: 'up-chat', input: 'hi', stream: true });
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') final = event.response;
    expect(final!.output[0]).toMatchObject({ type: 'message', content: [{ text: ANSWER }] });
    expect(final!.usage).toMatchObject({ input_tokens: FAKE_USAGE.prompt_tokens, output_tokens: FAKE_USAGE.completion_tokens });
    const { chargedMicros } = await bill();
    expect(chargedMicros).toBe(2 * costMicros(PRICES, FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens));
  });

  it('refuses previous_response_id and store: true with a 400 naming the parameter, charging nothing', async () => {
    const { client, bill } = await account();
    for (const extra of [{ previous_response_id: 'resp_123' }, { store: true }]) {
      const err = await client.responses.create({ model: 'demo-echo', input: 'hi', ...extra }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const body = (err as InstanceType<typeof OpenAI.BadRequestError>).error as { message: string; code: number; param: string };
      expect(body).toMatchObject({ code: 400, param: Object.keys(extra)[0] });
      expect(body.message).toMatch(/Stored responses are not supported/);
    }
    expect((await client.responses.create({ model: 'demo-echo', input: 'hi', store: false })).status).toBe('completed');
    const { records } = await bill();
    expect(records).toHaveLength(1);
  });
});

describe('the base addresses', () => {
  it.each(['/v1', '/api/v1'])('serve every endpoint under %s', async (base) => {
    const { apiKey } = await t.createAccount();
    const post = (path: string, body: object): Promise<Response> =>
      fetch(`${t.origin}${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await jsonOf(await post('/completions', { model: 'demo-echo', prompt: 'hi' }))).object).toBe('text_completion');
    expect((await jsonOf(await post('/responses', { model: 'demo-echo', input: 'hi' }))).object).toBe('response');
    expect((await jsonOf(await post('/embeddings', { model: 'demo-embed', input: 'hi' }))).object).toBe('list');
  });
});

describe('the catalogue’s endpoints', () => {
  it('GET /v1/models says what each model serves', async () => {
    const { apiKey } = await t.createAccount();
    const body = await jsonOf(await fetch(`${t.baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}` } }));
    const served = Object.fromEntries((body.data as { id: string; endpoints: string[] }[]).map((model) => [model.id, model.endpoints]));
    expect(served['demo-echo']).toEqual(['chat', 'responses', 'completions']);
    expect(served['demo-embed']).toEqual(['embeddings']);
    expect(served['up-embed']).toEqual(['embeddings']);
  });

  it('a model called on an endpoint it does not serve gets 422 naming the endpoints it serves, and is not charged', async () => {
    const { client, bill } = await account();
    const chat = await client.chat.completions.create({ model: 'demo-embed', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(chat).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    const { apiKey } = await t.createAccount();
    const res = await fetch(`${t.baseURL}/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', input: 'hi' }),
    });
    expect(res.status).toBe(422);
    expect(await jsonOf(res)).toMatchObject({
      error: { message: 'Validation failed', code: 422 },
      errors: { model: ['demo-echo is not served on /v1/embeddings; it serves /v1/chat/completions, /v1/responses, /v1/completions'] },
    });
    expect((await bill()).records).toHaveLength(0);
  });
});
