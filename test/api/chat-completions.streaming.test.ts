import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/models/tokens.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let apiKey: string;

beforeAll(async () => {
  t = await startApp();
  ({ apiKey } = await t.createAccount());
});
afterAll(() => t.close());

describe('streaming with the openai client', () => {
  it('deltas reassemble the answer, ending with finish_reason', async () => {
    const text = 'Streaming, token by token: ünïcödé 日本語 👋 works.';
    const stream = await t.client(apiKey).chat.completions.create({ model: 'demo-echo', stream: true, messages: [{ role: 'user', content: text }] });
    let content = '';
    const finishReasons: (string | null)[] = [];
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('demo-echo');
      content += chunk.choices[0]?.delta.content ?? '';
      finishReasons.push(chunk.choices[0]?.finish_reason ?? null);
    }
    expect(content).toBe(text);
    expect(chunks).toBeGreaterThan(countTextTokens(text));
    expect(finishReasons.at(-1)).toBe('stop');
    expect(finishReasons.slice(0, -1).every((r) => r === null)).toBe(true);
  });

  it('include_usage adds a final chunk with empty choices and exact usage', async () => {
    const stream = await t.client(apiKey).chat.completions.create({
      model: 'demo-echo',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 4,
      messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 4 });
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + 4);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
  });
});

describe('SSE framing on the wire', () => {
  it('sends event-stream headers, data: lines and a final [DONE]', async () => {
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-echo', stream: true, n: 2, messages: [{ role: 'user', content: 'a b c' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    // The rate-limit headers set before the stream go out with its status line, once each.
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    const raw = await res.text();
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = raw.split('\n\n').filter(Boolean);
    for (const event of events) expect(event.startsWith('data: ')).toBe(true);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    for (const index of [0, 1]) {
      const mine = chunks.filter((c) => c.choices[0]?.index === index);
      expect(mine[0].choices[0].delta.role).toBe('assistant');
      expect(mine.map((c) => c.choices[0].delta.content ?? '').join('')).toBe('a b c');
      expect(mine.at(-1).choices[0].finish_reason).toBe('stop');
    }
  });

  it('a client that disconnects mid-stream leaves the server serving', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo-lorem', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    const ok = await t.client(apiKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'after' }] });
    expect(ok.choices[0]!.message.content).toBe('after');
  });
});
