// Shutting down: new requests get the spec's 503 at once, running answers get the drain
// time to finish, and those still running then end with an error event and are charged
// for what they delivered.
import { afterEach, describe, expect, it } from 'vitest';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const DRAIN_SECONDS = 0.6;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(): Promise<TestApp> {
  t = await startApp({
    overrides: {
      server: { drain_seconds: DRAIN_SECONDS },
      models: {
        // 20 tokens a second: a long answer outlives the drain, a short one does not.
        'slow-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 20, price: { input: 1, output: 1 } },
      },
      tiers: { free: { rpm: 1000, tpm: 10_000_000, concurrency: 10, models: ['*'] } },
    },
  });
  return t;
}

/** Reads an SSE response to its end: the data events, and when each came. */
async function readEvents(res: Response): Promise<{ data: string[]; endedAtMs: number }> {
  const text = await res.text();
  const data = text.split('\n\n').filter((event) => event.startsWith('data: ')).map((event) => event.slice(6));
  return { data, endedAtMs: performance.now() };
}

describe('shutting down', () => {
  it('answers not ready while draining, and refuses new work with the spec 503', async () => {
    const app = await start();
    const { apiKey } = await app.createAccount();
    const cancel = app.app.inFlight.drain(60_000);
    try {
      const ready = await fetch(`${app.origin}/readyz`);
      expect(ready.status).toBe(503);
      expect((await jsonOf(ready)).status).toBe('draining');
      expect((await fetch(`${app.origin}/healthz`)).status).toBe(200);
      const refused = await fetch(`${app.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow-lorem', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((await jsonOf(refused)).error).toMatchObject({ code: 503, message: 'The server is restarting. Please retry the request.' });
    } finally {
      cancel();
    }
  });

  it('lets a short stream finish, and ends a long one after the drain time, charged for what it delivered', async () => {
    const app = await start();
    const { account, apiKey } = await app.createAccount({ credits: 100 });
    const post = (body: object): Promise<Response> =>
      fetch(`${app.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'slow-lorem', stream: true, messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
    const [short, long] = await Promise.all([post({ max_tokens: 6 }), post({ max_tokens: 1_000 })]);
    expect(short.status).toBe(200);
    expect(long.status).toBe(200);
    const shortEvents = readEvents(short);
    const longEvents = readEvents(long);

    const closingAtMs = performance.now();
    const closed = app.app.close();

    // The short answer (6 tokens, 0.3 s) ends normally within the drain.
    const { data: shortData } = await shortEvents;
    expect(shortData.at(-1)).toBe('[DONE]');
    // The long one (1,000 tokens, 50 s) ends at the drain time with an error event.
    const { data: longData, endedAtMs } = await longEvents;
    const elapsedMs = endedAtMs - closingAtMs;
    expect(elapsedMs).toBeGreaterThanOrEqual(DRAIN_SECONDS * 1000 - 50);
    expect(elapsedMs).toBeLessThan(DRAIN_SECONDS * 1000 + 1_500);
    const last = JSON.parse(longData.at(-1)!);
    expect(last.error).toMatchObject({ code: 503 });
    const delivered = longData.slice(0, -1).map((event) => JSON.parse(event)).filter((chunk) => chunk.choices?.[0]?.delta?.content);
    expect(delivered.length).toBeGreaterThan(3);
    await closed;

    // Closing flushed both charges; the long one is recorded as a 503 with what it delivered.
    const usage = await app.store.listUsage(account.id, { limit: 10 });
    expect(usage).toHaveLength(2);
    const ended = usage.find((record) => record.status === 503)!;
    expect(ended.completionTokens).toBeGreaterThanOrEqual(delivered.length);
    expect(ended.completionTokens).toBeLessThan(1_000);
    expect(ended.costMicros).toBe(ended.promptTokens + ended.completionTokens);
    expect(usage.find((record) => record.status === 200)!.completionTokens).toBe(6);
    const balance = await app.store.balanceOf(account.id);
    expect(balance).toBe(100_000_000 - usage.reduce((sum, record) => sum + record.costMicros, 0));
    expect(await app.store.sumLedger(account.id)).toBe(balance);
  });
});
