// The overview and the models an account's tier may use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { expectUnifiedError, sessionClient, DashboardClient } from './dashboard-client.js';

describe.each(['sqlite', 'postgres'] as const)('dashboard overview and models on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        models: {
          'demo-echo': { backend: 'demo', kind: 'echo', description: 'Answers with the last user message.' },
          'demo-lorem': { backend: 'demo', kind: 'lorem' },
          'big-model': {
            description: 'A large upstream model.',
            context: 32_000,
            max_output: 4_000,
            price: { input: 1.5, output: 3 },
            deployments: [{ url: 'http://127.0.0.1:9/v1', model: 'upstream-name' }],
          },
        },
        tiers: {
          free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'] },
          team: { rpm: 100, tpm: 100_000, concurrency: 8, models: ['*'] },
        },
      },
    });
  });
  afterAll(() => t.close());

  it('shows the account, its live balance, its plan and the base addresses', async () => {
    const client = await sessionClient(t);
    await t.store.appendLedgerEntry({ accountId: client.account.id, kind: 'grant', amountMicros: 3_250_000 });
    await t.syncChanges();
    const res = await client.get('/overview');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      account: client.account,
      standing: { state: 'ok', until: null },
      balanceMicros: 3_250_000,
      reservedMicros: 0,
      plan: {
        name: 'free',
        subscription: false,
        priceMonth: null,
        currency: 'usd',
        creditsMonthMicros: null,
        rpm: 60,
        tpm: 100_000,
        concurrency: 4,
        models: ['demo-echo', 'demo-lorem'],
        selfService: true,
        current: true,
      },
      baseUrls: [`${t.origin}/v1`, `${t.origin}/api/v1`],
    });
  });

  it("lists only the models the account's tier may use, with prices in credits per million tokens", async () => {
    const client = await sessionClient(t);
    const free = await client.get('/models');
    expect(free.body.models.map((m: { id: string }) => m.id)).toEqual(['demo-echo', 'demo-lorem']);
    expect(free.body.models[0]).toEqual({
      id: 'demo-echo',
      description: 'Answers with the last user message.',
      ownedBy: 'lmgate',
      context: 128_000,
      maxOutput: 16_384,
      endpoints: ['chat', 'responses', 'completions'],
      price: { inputPerMillion: 0, cachedInputPerMillion: 0, cacheWritePerMillion: 0, cacheWrite1hPerMillion: 0, outputPerMillion: 0, reasoningPerMillion: 0 },
    });

    expect((await client.post('/plan', { tier: 'team' })).status).toBe(200);
    const team = await client.get('/models');
    expect(team.body.models.map((m: { id: string }) => m.id)).toEqual(['demo-echo', 'demo-lorem', 'big-model']);
    expect(team.body.models[2]).toEqual({
      id: 'big-model',
      description: 'A large upstream model.',
      ownedBy: 'lmgate',
      context: 32_000,
      maxOutput: 4_000,
      endpoints: ['chat', 'responses', 'completions'],
      // The kinds not configured cost what input and output cost.
      price: { inputPerMillion: 1.5, cachedInputPerMillion: 1.5, cacheWritePerMillion: 1.5, cacheWrite1hPerMillion: 1.5, outputPerMillion: 3, reasoningPerMillion: 3 },
    });
  });

  it('both need a session', async () => {
    expectUnifiedError(await new DashboardClient(t).get('/overview'), 401, 'Unauthenticated.');
    expectUnifiedError(await new DashboardClient(t).get('/models'), 401, 'Unauthenticated.');
  });
});
