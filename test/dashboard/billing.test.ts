// Plans, plan change, the ledger and redemption codes through the dashboard, on SQLite
// and PostgreSQL: a code credits exactly once under concurrent redemption, and the API
// spends the new balance at once.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRedemptionCode, hashRedemptionCode } from '../../src/billing/redemption-code.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { DashboardClient, expectUnifiedError, sessionClient } from './dashboard-client.js';

const CHAT = { model: 'demo-echo', messages: [{ role: 'user' as const, content: 'hi' }] };

describe.each(['sqlite', 'postgres'] as const)('dashboard billing on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        tiers: {
          free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
          starter: { rpm: 5, tpm: 50_000, concurrency: 2, models: ['demo-*'], description: 'Small.' },
          pro: { rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['*'], subscription: true, price_month: 20, credits_month: 25 },
        },
      },
    });
  });
  afterAll(() => t.close());

  /** A code of `credits` stored as the CLI stores it; returns the code as printed. */
  async function issueCode(micros: number, expiresAt: string | null = null): Promise<{ code: string; id: string }> {
    const code = generateRedemptionCode();
    const [stored] = await t.store.createRedemptionCodes([{ codeHash: hashRedemptionCode(code), hint: 'LMG-…-TEST', amountMicros: micros, expiresAt }]);
    return { code, id: stored!.id };
  }

  it('GET /plans lists every tier, which are self-service, and the current one', async () => {
    const client = await sessionClient(t);
    const res = await client.get('/plans');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      current: 'free',
      standing: { state: 'ok', until: null },
      subscriptionStatus: 'inactive',
      plans: [
        { name: 'free', subscription: false, priceMonth: null, currency: 'usd', creditsMonthMicros: null, rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-echo', 'demo-lorem', 'demo-embed'], selfService: true, current: true },
        { name: 'starter', subscription: false, priceMonth: null, currency: 'usd', creditsMonthMicros: null, rpm: 5, tpm: 50_000, concurrency: 2, models: ['demo-echo', 'demo-lorem', 'demo-embed'], selfService: true, current: false },
        { name: 'pro', subscription: true, priceMonth: 20, currency: 'usd', creditsMonthMicros: 25_000_000, rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['demo-echo', 'demo-lorem', 'demo-embed'], selfService: false, current: false },
      ],
    });
  });

  it('a plan without a subscription can be chosen, and the API applies its limits at once', async () => {
    const client = await sessionClient(t);
    await t.store.appendLedgerEntry({ accountId: client.account.id, kind: 'grant', amountMicros: 1_000_000 });
    const { secret } = (await client.post('/keys', { name: 'api' })).body;
    const before = await t.client(secret).chat.completions.create(CHAT).withResponse();
    expect(before.response.headers.get('x-ratelimit-limit')).toBe('60');

    await t.app.changeFeed.stop();
    try {
      const res = await client.post('/plan', { tier: 'starter' });
      expect(res.status).toBe(200);
      expect(res.body.account).toMatchObject({ id: client.account.id, tier: 'starter' });
      const after = await t.client(secret).chat.completions.create(CHAT).withResponse();
      expect(after.response.headers.get('x-ratelimit-limit')).toBe('5');
    } finally {
      await t.app.changeFeed.start();
    }
    expect((await client.get('/plans')).body.current).toBe('starter');
    expect((await t.store.findAccount(client.account.id))!.tier).toBe('starter');
  });

  it('a plan that needs a subscription is 403, an unknown one 404, a missing one 422', async () => {
    const client = await sessionClient(t);
    expectUnifiedError(await client.post('/plan', { tier: 'pro' }), 403, 'Paid plans are arranged by the operator. Please contact them to subscribe.');
    expectUnifiedError(await client.post('/plan', { tier: 'enterprise' }), 404);
    expectUnifiedError(await client.post('/plan', {}), 422);
    expect((await t.store.findAccount(client.account.id))!.tier).toBe('free');
  });

  it('redeeming a code credits it once, writes a top_up entry, and the API can spend it at once', async () => {
    const client = await sessionClient(t);
    const { secret } = (await client.post('/keys', { name: 'api' })).body;
    const api = t.client(secret);
    expect(await api.chat.completions.create(CHAT).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.APIError);

    const { code, id } = await issueCode(4_000_000);
    await t.app.changeFeed.stop();
    try {
      // Typed loosely: lower case, no dashes, an O for a zero.
      const typed = code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'o');
      const res = await client.post('/redeem', { code: typed });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ creditedMicros: 4_000_000, balanceMicros: 4_000_000 });
      expect((await api.chat.completions.create(CHAT)).choices[0]!.message.content).toBe('hi');
    } finally {
      await t.app.changeFeed.start();
    }
    // The demo model is priced: the call spent part of the code's credits.
    await t.flushUsage();
    const [usage] = await t.store.listUsage(client.account.id);
    expect(usage!.costMicros).toBeGreaterThan(0);
    const ledger = await client.get('/ledger');
    expect(ledger.body).toEqual({
      balanceMicros: 4_000_000 - usage!.costMicros,
      entries: [
        { id: expect.any(Number), kind: 'usage', amountMicros: -usage!.costMicros, reason: expect.any(String), createdAt: expect.any(String) },
        { id: expect.any(Number), kind: 'top_up', amountMicros: 4_000_000, reason: 'redemption code', createdAt: expect.any(String) },
      ],
    });
    expect((await t.store.listLedger(client.account.id))[1]!.reference).toBe(id);
    expect((await client.get('/overview')).body.balanceMicros).toBe(4_000_000 - usage!.costMicros);

    expectUnifiedError(await client.post('/redeem', { code }), 409, 'This code has already been redeemed.');
    expectUnifiedError(await (await sessionClient(t)).post('/redeem', { code }), 409);
  });

  it('an unknown or malformed code is 404, an expired one 410, and neither credits anything', async () => {
    const client = await sessionClient(t);
    expectUnifiedError(await client.post('/redeem', { code: generateRedemptionCode() }), 404, 'Unknown code.');
    expectUnifiedError(await client.post('/redeem', { code: 'hello' }), 404, 'Unknown code.');
    const expired = await issueCode(1_000_000, new Date(Date.now() - 1000).toISOString());
    expectUnifiedError(await client.post('/redeem', { code: expired.code }), 410, 'This code has expired.');
    expectUnifiedError(await client.post('/redeem', {}), 422);
    expect(await t.store.balanceOf(client.account.id)).toBe(0);
    expect((await t.store.listRedemptionCodes()).find((c) => c.id === expired.id)!.redeemedBy).toBeNull();
  });

  it('after 10 failed redemptions in 15 minutes, redeeming is 429 with Retry-After, even for a good code', async () => {
    const client = await sessionClient(t);
    for (let i = 0; i < 10; i++) expectUnifiedError(await client.post('/redeem', { code: generateRedemptionCode() }), 404);
    const good = await issueCode(1_000_000);
    const res = await client.post('/redeem', { code: good.code });
    expectUnifiedError(res, 429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await t.store.balanceOf(client.account.id)).toBe(0);
  });

  it('20 concurrent redemptions of one code from two accounts credit it exactly once', async () => {
    const [a, b] = await Promise.all([sessionClient(t), sessionClient(t)]);
    const { code, id } = await issueCode(3_000_000);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).post('/redeem', { code })));
    const statuses = results.map((res) => res.status).sort();
    expect(statuses).toEqual([200, ...Array<number>(19).fill(409)]);

    const winner = results.findIndex((res) => res.status === 200) % 2 === 0 ? a : b;
    const loser = winner === a ? b : a;
    expect(await t.store.balanceOf(winner.account.id)).toBe(3_000_000);
    expect(await t.store.balanceOf(loser.account.id)).toBe(0);
    for (const client of [a, b]) expect(await t.store.sumLedger(client.account.id)).toBe(await t.store.balanceOf(client.account.id));
    expect((await t.store.listLedger(winner.account.id)).filter((entry) => entry.reference === id)).toHaveLength(1);
    expect((await t.store.listRedemptionCodes()).find((c) => c.id === id)).toMatchObject({ redeemedBy: winner.account.id });
  });

  it('the ledger is newest first, limited by ?limit (1..500, default 50)', async () => {
    const client = await sessionClient(t);
    for (let i = 1; i <= 3; i++) {
      await t.store.appendLedgerEntry({ accountId: client.account.id, kind: 'grant', amountMicros: i * 1000, reason: `grant ${i}` });
    }
    const all = await client.get('/ledger');
    expect(all.body.balanceMicros).toBe(6000);
    expect(all.body.entries.map((e: { reason: string }) => e.reason)).toEqual(['grant 3', 'grant 2', 'grant 1']);
    expect((await client.get('/ledger?limit=2')).body.entries.map((e: { amountMicros: number }) => e.amountMicros)).toEqual([3000, 2000]);
    for (const limit of ['0', '501', 'x']) expectUnifiedError(await client.get(`/ledger?limit=${limit}`), 422);
    // Another account's ledger shows nothing of this one's.
    expect((await (await sessionClient(t)).get('/ledger')).body).toEqual({ balanceMicros: 0, entries: [] });
  });

  it('the history sums a day of usage into one line, pages by ledger entries, and joins nothing else', async () => {
    const client = await sessionClient(t);
    const accountId = client.account.id as string;
    await t.store.appendLedgerEntry({ accountId, kind: 'grant', amountMicros: 5_000_000, reason: 'welcome' });
    const usage = [-1_000, -2_500, -700, -300];
    for (const amountMicros of usage) await t.store.appendLedgerEntry({ accountId, kind: 'usage', amountMicros });
    await t.store.appendLedgerEntry({ accountId, kind: 'adjustment', amountMicros: 100, reason: 'goodwill' });
    await t.store.appendLedgerEntry({ accountId, kind: 'usage', amountMicros: -50 });

    const whole = await client.get('/history');
    expect(whole.status, whole.text).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(whole.body.entries.map((e: { kind: string; amountMicros: number; charges?: number; day?: string }) => [e.kind, e.amountMicros, e.charges, e.day])).toEqual([
      ['usage', -50, 1, today],
      ['adjustment', 100, undefined, undefined],
      ['usage', -4_500, 4, today],
      ['grant', 5_000_000, undefined, undefined],
    ]);
    expect(whole.body.next).toBeNull();

    // Two entries a page: the day's four usage entries come as two lines of two, each with its day.
    const first = await client.get('/history?limit=2');
    expect(first.body.entries.map((e: { kind: string }) => e.kind)).toEqual(['usage', 'adjustment']);
    const second = await client.get(`/history?limit=2&before=${first.body.next}`);
    expect(second.body.entries).toEqual([expect.objectContaining({ kind: 'usage', amountMicros: -1_000, charges: 2, day: today })]);
    const third = await client.get(`/history?limit=2&before=${second.body.next}`);
    expect(third.body.entries.map((e: { amountMicros: number; charges?: number }) => [e.amountMicros, e.charges])).toEqual([[-3_500, 2]]);
    const last = await client.get(`/history?limit=2&before=${third.body.next}`);
    expect(last.body).toEqual({ entries: [expect.objectContaining({ kind: 'grant', reason: 'welcome' })], next: null });
    expect((await client.get('/history?limit=0')).status).toBe(422);
  });

  it('plans, ledger and redeem need a session', async () => {
    const anonymous = new DashboardClient(t);
    for (const res of [await anonymous.get('/plans'), await anonymous.get('/ledger'), await anonymous.post('/redeem', { code: 'x' }), await anonymous.post('/plan', { tier: 'free' })]) {
      expectUnifiedError(res, 401, 'Unauthenticated.');
    }
  });
});
