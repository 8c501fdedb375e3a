// lmgate in front of OpenAI-compatible upstreams (fake ones speaking the real wire format),
// driven with the official openai client: answers, streams, charges, failures, disconnects.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { DEFAULT_PIECES, FAKE_USAGE, refusingUpstreamUrl, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { readWords, settledUsage } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };
const ANSWER = DEFAULT_PIECES.join('');

let t: TestApp;
let upstream: FakeUpstream;
let apiKey: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  process.env.LMGATE_TEST_UPSTREAM_KEY = 'sk-upstream-secret';
  const refusing = await refusingUpstreamUrl();
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'llama-test': {
          price: { input: 1, output: 2 },
          deployments: [{ url: upstream.url, model: 'meta-llama/Llama-3.1-8B-Instruct', api_key_env: 'LMGATE_TEST_UPSTREAM_KEY' }],
        },
        'llama-failover': {
          deployments: [
            { url: refusing, model: 'gone', weight: 1000 },
            { url: upstream.url, model: 'backup-model', weight: 1 },
          ],
        },
        'llama-down': { deployments: [{ url: refusing, model: 'gone' }] },
      },
    },
  });
  ({ apiKey } = await t.createAccount({ credits: 10 }));
});
afterAll(async () => {
  await t.close();
  await upstream.close();
  delete process.env.LMGATE_TEST_UPSTREAM_KEY;
});

function post(body: object): Promise<Response> {
  return fetch(`${t.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('through an upstream', () => {
  it('answers with lmgate’s model id, forwards the request with the upstream’s model and key, and charges the upstream’s usage', async () => {
    const { account, apiKey: key } = await t.createAccount({ credits: 10 });
    upstream.behave({});
    const seen = upstream.requests.length;
    const completion = await t.client(key).chat.completions.create({
      model: 'llama-test',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.3,
      // An extra parameter lmgate does not know passes through untouched.
      ...({ top_k: 40 } as object),
    });
    expect(completion.model).toBe('llama-test');
    expect(completion.choices[0]!.message.content).toBe(ANSWER);
    expect(completion.usage).toMatchObject({ prompt_tokens: FAKE_USAGE.prompt_tokens, completion_tokens: FAKE_USAGE.completion_tokens });

    const forwarded = upstream.requests[seen]!;
    expect(forwarded.body).toMatchObject({ model: 'meta-llama/Llama-3.1-8B-Instruct', temperature: 0.3, top_k: 40 });
    expect(forwarded.headers.authorization).toBe('Bearer sk-upstream-secret');

    await t.flushUsage();
    const [record] = await t.store.listUsage(account.id);
    expect(record).toMatchObject({ model: 'llama-test', status: 200, promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens });
    expect(await t.store.balanceOf(account.id)).toBe(10_000_000 - costMicros(PRICES, FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens));
  });

  it('forwards the client’s JSON text as it came, with only the model renamed (and usage asked for on streams)', async () => {
    upstream.behave({});
    // Spacing, key order, 1.0 and escapes that a re-serialization would change.
    const client = (stream: string) =>
      `{ "messages": [{"role":"user","content":"caf\\u00e9 \\"model\\":\\"llama-test\\""}],"model":"llama-test", "temperature": 1.0,${stream}"top_k":4e1}`;
    for (const [stream, expected] of [
      ['', client('').replace('"model":"llama-test"', '"model":"meta-llama/Llama-3.1-8B-Instruct"')],
      ['"stream":true,', `{"stream_options":{"include_usage":true},${client('"stream":true,').slice(1).replace('"model":"llama-test"', '"model":"meta-llama/Llama-3.1-8B-Instruct"')}`],
    ]) {
      const seen = upstream.requests.length;
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: client(stream!),
      });
      expect(res.status).toBe(200);
      await res.text();
      expect(upstream.requests[seen]!.text).toBe(expected);
    }
  });

  it('streams the upstream’s chunks through, with usage when asked for', async () => {
    upstream.behave({});
    const stream = await t.client(apiKey).chat.completions.create({
      model: 'llama-test',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream it' }],
    });
    let content = '';
    let usage;
    for await (const chunk of stream) {
      expect(chunk.model).toBe('llama-test');
      content += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(content).toBe(ANSWER);
    expect(usage).toMatchObject({ completion_tokens: FAKE_USAGE.completion_tokens });
  });

  it('moves to another deployment when the first refuses connections', async () => {
    upstream.behave({});
    const completion = await t.client(apiKey).chat.completions.create({ model: 'llama-failover', messages: [{ role: 'user', content: 'x' }] });
    expect(completion.choices[0]!.message.content).toBe(ANSWER);
    expect(upstream.requests.at(-1)!.body.model).toBe('backup-model');
  });
});

describe('failures', () => {
  it('no reachable deployment: 503 in the unified body, streamed or not, and nothing charged', async () => {
    const { account, apiKey: key } = await t.createAccount({ credits: 10 });
    for (const stream of [false, true]) {
      const res = await fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'llama-down', stream, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(res.status).toBe(503);
      const body = await jsonOf(res);
      expect(body.error).toMatchObject({ code: 503, request_id: res.headers.get('x-request-id') });
      expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|localhost/);
    }
    const err = await t.client(key).chat.completions.create({ model: 'llama-down', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    await t.flushUsage();
    expect(await t.store.balanceOf(account.id)).toBe(10_000_000);
  });

  it('an upstream 400 comes back as 400 with the upstream’s message, never its address or key', async () => {
    upstream.behave({ status: 400, errorMessage: 'max_tokens is too large for this model' });
    const res = await post({ model: 'llama-test', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(400);
    const body = await jsonOf(res);
    expect(body.error).toMatchObject({ code: 400, message: 'max_tokens is too large for this model' });
    expect(JSON.stringify(body)).not.toContain(upstream.hostPort);
    expect(JSON.stringify(body)).not.toContain('sk-upstream-secret');
    upstream.behave({});
  });

  it('a client that disconnects mid-stream aborts the upstream request and pays for what was delivered', async () => {
    const { account, apiKey: key } = await t.createAccount({ credits: 10 });
    upstream.behave({ pieces: Array.from({ length: 200 }, (_, i) => ` word${i}`), chunkDelayMs: 20, noUsage: true });
    const seen = upstream.requests.length;
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama-test', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    await readWords(res, 3);
    controller.abort();

    expect(await upstream.requests[seen]!.closed).toBe(true);
    const records = await settledUsage(t, account.id);
    expect(records[0]).toMatchObject({ status: 499, streamed: true });
    expect(records[0]!.completionTokens).toBeGreaterThanOrEqual(3);
    expect(records[0]!.completionTokens).toBeLessThan(200);
    upstream.behave({});
  });
});
