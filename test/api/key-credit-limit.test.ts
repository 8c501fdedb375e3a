// A key's credit limit with the openai client, in one process (SQLite) and in shared mode
// (PostgreSQL and Redis): set and cleared in the dashboard, shown there as spent against
// the limit, and enforced on the request path: what the key spent plus what its running
// requests hold plus the new worst case stays within the limit, or 402 key_credit_limit
// with the key's figures. A monthly limit counts the calendar month (UTC) and starts again
// on the first; a key's spending is read from the store when it is first needed.
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../src/config/schema.js';
import { SPEC_MESSAGES } from '../../src/http/error-reply.js';
import { newTimeOrderedId } from '../../src/ids.js';
import type { Store, UsageRecord } from '../../src/store/store.js';
import { sessionClient, type DashboardClient } from '../dashboard/dashboard-client.js';
import { startApp } from '../helpers/start-app.js';
import { startCluster } from '../helpers/start-cluster.js';
import { PLAIN_USAGE } from '../helpers/usage-record.js';

// 1 input token = 1,000 micro-credits, 1 output token = 2,000.
const INPUT_MICROS = 1_000;
const OUTPUT_MICROS = 2_000;
const OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 100_000, tpm: 100_000_000, concurrency: 200, models: ['*'] } },
  models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } } },
};
const HELLO = [{ role: 'user' as const, content: 'Hello there, general Kenobi' }];
const GRANT_MICROS = 100_000_000;

type ApiError = InstanceType<typeof OpenAI.APIError>;
type CostedUsage = OpenAI.CompletionUsage & { cost: number };

/** What the suite needs of the instance it talks to, in either mode. */
interface Target {
  origin: string;
  store: Store;
  config: Config;
  app: FastifyInstance;
  client(apiKey: string): OpenAI;
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

async function memoryTarget(): Promise<Target> {
  const t = await startApp({ overrides: OVERRIDES });
  return { origin: t.origin, store: t.store, config: t.config, app: t.app, client: (apiKey) => t.client(apiKey), flushUsage: () => t.flushUsage(), close: () => t.close() };
}

async function sharedTarget(): Promise<Target> {
  const cluster = await startCluster(1, OVERRIDES);
  const instance = cluster.instances[0]!;
  return {
    origin: instance.origin,
    store: cluster.store,
    config: cluster.config,
    app: instance.app,
    client: (apiKey) => instance.client(apiKey),
    flushUsage: () => cluster.flushUsage(),
    close: () => cluster.close(),
  };
}

const micros = (usage: OpenAI.CompletionUsage | undefined): number => Math.round((usage as CostedUsage).cost * 1_000_000);

describe.each([
  ['one process', memoryTarget],
  ['shared mode', sharedTarget],
] as const)('a key’s credit limit, %s', (_mode, start) => {
  let target: Target;

  beforeAll(async () => {
    target = await start();
  });
  afterAll(() => target.close());
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A signed-in account with 100 credits, and a key generated in the dashboard with `body`'s controls. */
  async function newKey(body: Record<string, unknown>): Promise<{ alice: DashboardClient; keyId: string; client: OpenAI; view: Record<string, unknown> }> {
    const alice = await sessionClient(target);
    await target.store.appendLedgerEntry({ accountId: alice.account.id, kind: 'grant', amountMicros: GRANT_MICROS });
    const res = await alice.post('/keys', { name: 'limited', ...body });
    expect(res.status, res.text).toBe(201);
    return { alice, keyId: res.body.key.id, client: target.client(res.body.secret), view: res.body.key };
  }

  async function viewOf(alice: DashboardClient, keyId: string): Promise<Record<string, unknown>> {
    const res = await alice.get('/keys');
    return res.body.keys.find((key: { id: string }) => key.id === keyId);
  }

  /** Requests until the key's limit refuses one: what was charged meanwhile, and the refusal. */
  async function spendUntilRefused(client: OpenAI, maxTokens: number): Promise<{ chargedMicros: number; promptTokens: number; refusal: ApiError }> {
    let chargedMicros = 0;
    let promptTokens = 0;
    for (let i = 0; i < 100; i++) {
      const outcome = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: maxTokens }).then(
        (answer) => answer,
        (err: unknown) => err as ApiError,
      );
      if (outcome instanceof OpenAI.APIError) return { chargedMicros, promptTokens, refusal: outcome };
      chargedMicros += micros(outcome.usage);
      promptTokens = outcome.usage!.prompt_tokens;
    }
    throw new Error('the limit never refused a request');
  }

  it('a key generated with a limit is refused with 402 key_credit_limit once spent, with the key’s figures; the dashboard shows what it spent', async () => {
    const limit = 200_000;
    const { alice, keyId, client, view } = await newKey({ creditLimitMicros: limit, creditLimitPeriod: 'total' });
    expect(view).toMatchObject({ creditLimitMicros: limit, creditLimitPeriod: 'total', creditSpentMicros: 0 });

    const { chargedMicros, promptTokens, refusal } = await spendUntilRefused(client, 20);
    expect(chargedMicros).toBeGreaterThan(0);
    expect(refusal.status).toBe(402);
    const available = limit - chargedMicros;
    const worst = promptTokens * INPUT_MICROS + 20 * OUTPUT_MICROS;
    // The output ceiling is what does not fit: a lower max_tokens would, within the key's limit.
    const fit = Math.floor((available - promptTokens * INPUT_MICROS) / OUTPUT_MICROS);
    expect(refusal.error).toMatchObject({
      message: SPEC_MESSAGES[402],
      code: 402,
      reason: 'key_credit_limit',
      credits_required: worst / 1_000_000,
      credits_available: available / 1_000_000,
      max_tokens_that_fit: fit,
    });
    expect((refusal.error as { hint: string }).hint).toContain('what is left of the key\'s credit limit');
    const fitted = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: fit });
    const spent = chargedMicros + micros(fitted.usage);
    expect(spent).toBeLessThanOrEqual(limit);

    // The dashboard shows what the request path counts; the store agrees once it has the usage.
    expect(await viewOf(alice, keyId)).toMatchObject({ creditLimitMicros: limit, creditSpentMicros: spent });
    await target.flushUsage();
    await vi.waitFor(async () => expect(await target.store.spendOf({ keyId: keyId }, null)).toBe(spent), { timeout: 10_000, interval: 50 });

    // The account's other keys are not held by it.
    const other = await alice.post('/keys', { name: 'other' });
    await target.client(other.body.secret).chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });
  });

  it('a limit lowered below what was spent refuses before counting, the log says why, and clearing it lets the key spend again', async () => {
    const { alice, keyId, client } = await newKey({ creditLimitMicros: 1_000_000 });
    const answer = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });
    const spent = micros(answer.usage);

    const lowered = await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: Math.floor(spent / 2), creditLimitPeriod: 'month' } });
    expect(lowered.status, lowered.text).toBe(200);
    expect(lowered.body.key).toMatchObject({ creditLimitMicros: Math.floor(spent / 2), creditLimitPeriod: 'month', creditSpentMicros: spent });
    for (let i = 0; i < 2; i++) {
      const refused = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 }).then(
        () => expect.unreachable('the request succeeded'),
        (err: unknown) => err as ApiError,
      );
      expect(refused.status).toBe(402);
      expect(refused.error).toMatchObject({ message: SPEC_MESSAGES[402], reason: 'key_credit_limit', credits_available: 0 });
    }
    await target.app.refusals.flush();
    const log = await alice.get(`/requests?key=${keyId}&outcome=failed`);
    expect(log.body.requests.map((r: { status: number; reason: string }) => [r.status, r.reason])).toEqual([
      [402, 'key_credit_limit'],
      [402, 'key_credit_limit'],
    ]);

    const cleared = await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: null } });
    expect(cleared.body.key).toMatchObject({ creditLimitMicros: null, creditLimitPeriod: null, creditSpentMicros: null });
    await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });

    const bad = await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: 0 } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('creditLimitMicros');
    expect((await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: 5, creditLimitPeriod: 'week' } })).status).toBe(422);
  });

  it('concurrent requests cannot overspend the limit: running requests hold their worst case against it', async () => {
    const limit = 300_000;
    const { keyId, client } = await newKey({ creditLimitMicros: limit });
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, () =>
        client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 40 }).then(
          (answer) => ({ status: 200, charged: micros(answer.usage), reason: undefined }),
          (err: unknown) => ({ status: (err as ApiError).status, charged: 0, reason: ((err as ApiError).error as { reason?: string }).reason }),
        ),
      ),
    );
    const served = outcomes.filter((o) => o.status === 200);
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(served.length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((o) => o.status === 402 && o.reason === 'key_credit_limit')).toBe(true);
    const charged = served.reduce((sum, o) => sum + o.charged, 0);
    expect(charged).toBeLessThanOrEqual(limit);
    await target.flushUsage();
    await vi.waitFor(async () => expect(await target.store.spendOf({ keyId: keyId }, null)).toBe(charged), { timeout: 10_000, interval: 50 });
  });

  it('a key’s spending is read from the store when it is first needed: this month’s for a monthly limit, all of it for a total', async () => {
    const { alice, keyId, client } = await newKey({});
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1).toISOString();
    const record = (costMicros: number, createdAt: string): UsageRecord => ({
      id: newTimeOrderedId('usage'),
      requestId: `req_${costMicros}`,
      accountId: alice.account.id,
      keyId,
      model: 'priced-echo',
      promptTokens: 1,
      ...PLAIN_USAGE,
      completionTokens: 1,
      costMicros,
      latencyMs: 1,
      status: 200,
      streamed: false,
      finishReason: 'stop',
      memberId: null,
      createdAt,
    });
    await target.store.recordUsage([record(90_000, now.toISOString()), record(500_000, lastMonth)]);

    const monthly = await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: 100_000, creditLimitPeriod: 'month' } });
    expect(monthly.body.key).toMatchObject({ creditSpentMicros: 90_000 });
    const refused = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 }).then(
      () => expect.unreachable('the request succeeded'),
      (err: unknown) => err as ApiError,
    );
    expect(refused.error).toMatchObject({ reason: 'key_credit_limit', credits_available: 0.01 });

    const total = await alice.request('PATCH', `/keys/${keyId}`, { body: { creditLimitMicros: 1_000_000, creditLimitPeriod: 'total' } });
    expect(total.body.key).toMatchObject({ creditSpentMicros: 590_000 });
    const answer = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });
    expect(await viewOf(alice, keyId)).toMatchObject({ creditSpentMicros: 590_000 + micros(answer.usage) });
  });

  it('a monthly limit starts again on the first of the next month (UTC)', async () => {
    // Only Date is faked: the clock src/clock.ts reads, which dates usage records.
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    vi.setSystemTime(new Date('2031-01-31T23:58:00.000Z'));
    const { alice, keyId, client } = await newKey({ creditLimitMicros: 150_000, creditLimitPeriod: 'month' });
    const { chargedMicros, refusal } = await spendUntilRefused(client, 20);
    expect(refusal.error).toMatchObject({ reason: 'key_credit_limit' });
    expect(await viewOf(alice, keyId)).toMatchObject({ creditSpentMicros: chargedMicros });

    vi.setSystemTime(new Date('2031-02-01T00:00:30.000Z'));
    const answer = await client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: 20 });
    expect(await viewOf(alice, keyId)).toMatchObject({ creditSpentMicros: micros(answer.usage) });
    await target.flushUsage();
    await vi.waitFor(async () => expect(await target.store.spendOf({ keyId: keyId }, '2031-02-01T00:00:00.000Z')).toBe(micros(answer.usage)), { timeout: 10_000, interval: 50 });
  });
});
