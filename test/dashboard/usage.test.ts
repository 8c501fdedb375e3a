// Usage through the dashboard, on SQLite and PostgreSQL: the sums match the records real
// chat requests left (made with the openai client), every day of the period is present,
// and another account's usage never shows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../src/store/store.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DashboardClient, expectUnifiedError, sessionClient } from './dashboard-client.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

const DAY_MS = 24 * 3600 * 1000;
const day = (offsetDays: number): string => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const CSV_HEADER =
  'created_at,request_id,model,key_id,key_name,prompt_tokens,completion_tokens,cost_credits,latency_ms,status,streamed,finish_reason,' +
  'cached_tokens,cache_write_tokens,cache_write_1h_tokens,reasoning_tokens,basis,outcome,unpaid_credits';

describe.each(['sqlite', 'postgres'] as const)('dashboard usage on %s', (database) => {
  let t: TestApp;
  let alice: DashboardClient;
  let bob: DashboardClient;
  let keys: { id: string; name: string; secret: string }[];
  let records: UsageRecord[];

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        models: {
          'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, price: { input: 2, output: 4 } },
          'demo-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 0, price: { input: 1, output: 3 } },
        },
      },
    });
    [alice, bob] = await Promise.all([sessionClient(t), sessionClient(t)]);
    for (const client of [alice, bob]) {
      await t.store.appendLedgerEntry({ accountId: client.account.id, kind: 'grant', amountMicros: 100_000_000 });
    }
    keys = [];
    for (const name of ['laptop', '=SUM(A1)']) {
      const res = await alice.post('/keys', { name });
      keys.push({ id: res.body.key.id, name, secret: res.body.secret });
    }
    const laptop = t.client(keys[0]!.secret);
    const formula = t.client(keys[1]!.secret);
    await laptop.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'first question, please' }] });
    await laptop.chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'a second, longer question about many things' }] });
    await laptop.chat.completions.create({ model: 'demo-lorem', max_tokens: 20, messages: [{ role: 'user', content: 'write' }] });
    const stream = await formula.chat.completions.create({ model: 'demo-echo', stream: true, messages: [{ role: 'user', content: 'streamed "quoted", text' }] });
    for await (const chunk of stream) void chunk;
    // Bob's request must never appear in Alice's numbers.
    const bobKey = (await bob.post('/keys', { name: 'bob' })).body.secret;
    await t.client(bobKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'bob was here' }] });
    await t.flushUsage();
    records = await t.store.listUsage(alice.account.id);
  });
  afterAll(() => t.close());

  function sum(rows: UsageRecord[]): { requests: number; promptTokens: number; completionTokens: number; costMicros: number } {
    return {
      requests: rows.length,
      promptTokens: rows.reduce((n, r) => n + r.promptTokens, 0),
      completionTokens: rows.reduce((n, r) => n + r.completionTokens, 0),
      costMicros: rows.reduce((n, r) => n + r.costMicros, 0),
    };
  }

  it('the default period is the last 30 days, every day present, today holding the requests made', async () => {
    expect(records).toHaveLength(4);
    const res = await alice.get('/usage');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body.from).toBe(day(-29));
    expect(res.body.to).toBe(day(0));
    expect(res.body.days).toHaveLength(30);
    expect(res.body.days.map((d: { date: string }) => d.date)).toEqual(Array.from({ length: 30 }, (_, i) => day(i - 29)));
    expect(res.body.days.slice(0, 29).every((d: { requests: number; costMicros: number }) => d.requests === 0 && d.costMicros === 0)).toBe(true);
    const today = res.body.days[29];
    expect(today).toEqual({ date: day(0), ...sum(records) });
    expect(today.costMicros).toBeGreaterThan(0);
    expect(today.promptTokens).toBeGreaterThan(0);
  });

  it('byModel and byKey split the same requests, with key names', async () => {
    const res = await alice.get(`/usage?from=${day(0)}&to=${day(0)}`);
    expect(res.body.byModel).toEqual([
      { date: day(0), model: 'demo-echo', ...sum(records.filter((r) => r.model === 'demo-echo')) },
      { date: day(0), model: 'demo-lorem', ...sum(records.filter((r) => r.model === 'demo-lorem')) },
    ]);
    expect(res.body.byModel[1].completionTokens).toBe(20);
    const byKey = [...res.body.byKey].sort((x: { keyName: string }, y: { keyName: string }) => x.keyName.localeCompare(y.keyName));
    expect(byKey).toEqual(
      [...keys]
        .sort((x, y) => x.name.localeCompare(y.name))
        .map((key) => ({ date: day(0), keyId: key.id, keyName: key.name, ...sum(records.filter((r) => r.keyId === key.id)) })),
    );
  });

  it('recent lists the requests newest first with their details', async () => {
    const res = await alice.get('/usage');
    expect(res.body.recent).toHaveLength(4);
    expect(res.body.recent.map((r: { id: string }) => r.id)).toEqual(records.map((r) => r.id));
    const streamed = records.find((r) => r.streamed)!;
    expect(res.body.recent.find((r: { id: string }) => r.id === streamed.id)).toEqual({
      id: streamed.id,
      requestId: streamed.requestId,
      createdAt: streamed.createdAt,
      model: 'demo-echo',
      keyId: keys[1]!.id,
      keyName: '=SUM(A1)',
      promptTokens: streamed.promptTokens,
      completionTokens: streamed.completionTokens,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      basis: 'reported',
      outcome: 'completed',
      costMicros: streamed.costMicros,
      shortfallMicros: 0,
      latencyMs: streamed.latencyMs,
      status: 200,
      streamed: true,
      finishReason: 'stop',
    });
  });

  it('older usage lands on its own day; days outside the period are left out', async () => {
    const at = (offsetDays: number): string => new Date(Date.now() + offsetDays * DAY_MS).toISOString();
    const old = (id: string, offsetDays: number): UsageRecord => ({
      id,
      requestId: `req_${id}`,
      accountId: alice.account.id,
      keyId: keys[0]!.id,
      model: 'demo-echo',
      promptTokens: 10,
      ...PLAIN_USAGE,
      completionTokens: 5,
      costMicros: 40,
      latencyMs: 3,
      status: 200,
      streamed: false,
      finishReason: 'stop',
      memberId: null,
      createdAt: at(offsetDays),
    });
    await t.store.recordUsage([old(`usage_old3a${database}`, -3), old(`usage_old3b${database}`, -3), old(`usage_old40${database}`, -40)]);
    const res = await alice.get(`/usage?from=${day(-5)}&to=${day(-1)}`);
    expect(res.body.days).toEqual([
      { date: day(-5), requests: 0, promptTokens: 0, completionTokens: 0, costMicros: 0 },
      { date: day(-4), requests: 0, promptTokens: 0, completionTokens: 0, costMicros: 0 },
      { date: day(-3), requests: 2, promptTokens: 20, completionTokens: 10, costMicros: 80 },
      { date: day(-2), requests: 0, promptTokens: 0, completionTokens: 0, costMicros: 0 },
      { date: day(-1), requests: 0, promptTokens: 0, completionTokens: 0, costMicros: 0 },
    ]);
    expect(res.body.recent).toHaveLength(2);
    expect(res.body.byKey).toEqual([{ date: day(-3), keyId: keys[0]!.id, keyName: 'laptop', requests: 2, promptTokens: 20, completionTokens: 10, costMicros: 80 }]);
    const wide = await alice.get(`/usage?from=${day(-60)}&to=${day(0)}`);
    expect(wide.body.days.reduce((n: number, d: { requests: number }) => n + d.requests, 0)).toBe(7);
  });

  it("another account's usage is never part of this one's", async () => {
    const res = await bob.get(`/usage?from=${day(-60)}&to=${day(0)}`);
    expect(res.body.recent).toHaveLength(1);
    expect(res.body.recent[0].keyName).toBe('bob');
    expect(res.body.byKey.map((k: { keyId: string }) => k.keyId)).not.toContain(keys[0]!.id);
    const csv = await bob.get(`/usage.csv?from=${day(-60)}&to=${day(0)}`);
    expect(csv.text.trim().split('\r\n')).toHaveLength(2);
    for (const key of keys) expect(csv.text).not.toContain(key.id);
  });

  it('the CSV has the header and one row per request in the period, as an attachment', async () => {
    const res = await alice.get(`/usage.csv?from=${day(0)}&to=${day(0)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="lmgate-usage-${day(0)}-${day(0)}.csv"`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const lines = res.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines).toHaveLength(records.length + 1);
    const newest = records[0]!;
    expect(lines[1]).toBe(
      [newest.createdAt, newest.requestId, newest.model, newest.keyId, newest.keyId === keys[1]!.id ? "'=SUM(A1)" : 'laptop', newest.promptTokens,
        newest.completionTokens, (newest.costMicros / 1e6).toString(), newest.latencyMs, newest.status, newest.streamed, newest.finishReason,
        0, 0, 0, 0, 'reported', 'completed', '0'].join(','),
    );
    // A key name a spreadsheet would run as a formula is defused.
    expect(res.text).toContain(",'=SUM(A1),");
    const all = await alice.get(`/usage.csv?from=${day(-60)}&to=${day(0)}`);
    expect(all.text.trimEnd().split('\r\n')).toHaveLength(1 + 7);
  });

  it('a bad period is 422: not a date, from after to, longer than 366 days', async () => {
    for (const query of [`from=yesterday&to=${day(0)}`, `from=${day(0)}&to=2025-02-30`, `from=${day(0)}&to=${day(-1)}`, `from=${day(-366)}&to=${day(0)}`]) {
      expectUnifiedError(await alice.get(`/usage?${query}`), 422);
      expectUnifiedError(await alice.get(`/usage.csv?${query}`), 422);
    }
    const longest = await alice.get(`/usage?from=${day(-365)}&to=${day(0)}`);
    expect(longest.status).toBe(200);
    expect(longest.body.days).toHaveLength(366);
    expectUnifiedError(await new DashboardClient(t).get('/usage'), 401, 'Unauthenticated.');
    expectUnifiedError(await new DashboardClient(t).get('/usage.csv'), 401, 'Unauthenticated.');
  });
});
