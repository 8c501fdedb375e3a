import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelCatalog } from '../../src/models/catalog.js';
import { countTextTokens } from '../../src/models/tokens.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { jsonOf } from '../helpers/json.js';

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await startApp({ overrides: { server: { api_host: 'api.lmgate.test' } } });
  ({ apiKey } = await t.createAccount());
});
afterAll(() => t.close());

describe('chat completions with the openai client', () => {
  it('echo answers with the last user message in an OpenAI chat.completion', async () => {
    const completion = await t.client(apiKey).chat.completions.create({
      model: 'demo-echo',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'Hello, wörld 👋' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('demo-echo');
    expect(completion.choices).toHaveLength(1);
    expect(completion.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Hello, wörld 👋' });
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(completion.usage!.completion_tokens).toBe(countTextTokens('Hello, wörld 👋'));
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(countTextTokens('first Hello, wörld 👋 be brief ok'));
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
  });

  it('content given as text parts is echoed', async () => {
    const completion = await t.client(apiKey).chat.completions.create({
      model: 'demo-echo',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'part one, ' }, { type: 'text', text: 'part two' }] }],
    });
    expect(completion.choices[0]!.message.content).toBe('part one, part two');
  });

  it('n, stop and max_tokens are honoured', async () => {
    const client = t.client(apiKey);
    const many = await client.chat.completions.create({ model: 'demo-echo', n: 3, messages: [{ role: 'user', content: 'same' }] });
    expect(many.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(many.choices.every((c) => c.message.content === 'same')).toBe(true);

    const stopped = await client.chat.completions.create({ model: 'demo-echo', stop: ['STOP'], messages: [{ role: 'user', content: 'before STOP after' }] });
    expect(stopped.choices[0]!.message.content).toBe('before ');
    expect(stopped.choices[0]!.finish_reason).toBe('stop');

    const cut = await client.chat.completions.create({ model: 'demo-echo', max_tokens: 3, messages: [{ role: 'user', content: 'one two three four five six seven' }] });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage!.completion_tokens).toBe(3);
  });

  it('lorem writes filler text of the requested length', async () => {
    const completion = await t.client(apiKey).chat.completions.create({ model: 'demo-lorem', max_completion_tokens: 12, messages: [{ role: 'user', content: 'write' }] });
    expect(completion.usage!.completion_tokens).toBe(12);
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(countTextTokens(completion.choices[0]!.message.content!)).toBeGreaterThanOrEqual(10);
  });

  it('all three base addresses answer the same', async () => {
    const contents: string[] = [];
    for (const baseURL of [`${t.origin}/v1`, `${t.origin}/api/v1`]) {
      const c = await t.client(apiKey, baseURL).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'same everywhere' }] });
      contents.push(c.choices[0]!.message.content!);
    }
    // The dedicated API hostname, reached by its Host header.
    const res = await fetch(`${t.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { host: 'api.lmgate.test', authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', messages: [{ role: 'user', content: 'same everywhere' }] }),
    });
    expect(res.status).toBe(200);
    contents.push((await jsonOf(res)).choices[0].message.content);
    expect(contents).toEqual(['same everywhere', 'same everywhere', 'same everywhere']);
  });
});

describe('models', () => {
  it('lists the catalogue in OpenAI list format with price and context', async () => {
    const client = t.client(apiKey);
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['demo-echo', 'demo-embed', 'demo-lorem']);

    const res = await fetch(`${t.baseURL}/models`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = await jsonOf(res);
    expect(body.object).toBe('list');
    expect(body.data[0]).toMatchObject({ object: 'model', owned_by: 'lmgate', context_length: 128000, pricing: { input: 0.5, output: 1.5 } });
    expect(typeof body.data[0].created).toBe('number');
  });

  it('retrieves one model, and 404s an unknown one', async () => {
    const client = t.client(apiKey);
    expect((await client.models.retrieve('demo-lorem')).id).toBe('demo-lorem');
    const res = await fetch(`${t.baseURL}/models/nope`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(404);
    expect((await jsonOf(res)).error).toMatchObject({ message: 'Model not found.', code: 404 });
  });

  it('models need a key too', async () => {
    const res = await fetch(`${t.baseURL}/models`);
    expect(res.status).toBe(401);
  });

  it('the response schema writes every catalogue model object byte for byte as JSON.stringify would', async () => {
    const own = await startApp({
      overrides: {
        models: {
          priced: { backend: 'demo', kind: 'echo', description: 'Says "hi" \u2028 <b>', price: { input: 0.15, output: 2.5 } },
          plain: { backend: 'demo', kind: 'lorem', context: 4096, max_output: 1000 },
        },
      },
    });
    const catalog = new ModelCatalog(own.config);
    try {
      const { apiKey: key } = await own.createAccount();
      const headers = { authorization: `Bearer ${key}` };
      const list = await fetch(`${own.baseURL}/models`, { headers });
      expect(await list.text()).toBe(JSON.stringify({ object: 'list', data: catalog.list().map((model) => model.json) }));
      for (const id of ['priced', 'plain']) {
        const one = await fetch(`${own.baseURL}/models/${id}`, { headers });
        expect(await one.text()).toBe(JSON.stringify(catalog.resolve(id).json));
      }
    } finally {
      await catalog.close();
      await own.close();
    }
  });
});
