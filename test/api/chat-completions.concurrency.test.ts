import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { jsonOf } from '../helpers/json.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000_000, outputPerMTokMicros: 1_000_000_000 }; // 1,000 micros a token

describe.each(['sqlite', 'postgres'] as const)('concurrent spending on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({
      database,
      overrides: {
        default_tier: 'wide',
        tiers: { wide: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 1000, models: ['*'] } },
        models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 100, price: { input: 1000, output: 1000 } } },
      },
    });
  });
  afterAll(() => t.close());

  it('500 requests at once against a balance for about 50: no overdraft, every answer 200 or 402, ledger exact', async () => {
    const messages = [{ role: 'user', content: 'spend it all' }];
    // Worst case of one request: its prompt plus max_tokens (20) at 1,000 micros a token.
    const probe = await t.createAccount({ credits: 1 });
    const probed = await t.client(probe.apiKey).chat.completions.create({ model: 'priced-echo', max_tokens: 20, messages: messages as never });
    const worstCase = costMicros(PRICES, probed.usage!.prompt_tokens, 20);
    const actual = costMicros(PRICES, probed.usage!.prompt_tokens, probed.usage!.completion_tokens);

    const start = worstCase * 50 + Math.floor(worstCase / 2);
    const { account, apiKey } = await t.createAccount({ credits: start / 1_000_000 });
    const responses = await Promise.all(
      Array.from({ length: 500 }, () =>
        fetch(`${t.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'priced-echo', max_tokens: 20, messages }),
        }).then(async (res) => ({ status: res.status, body: await jsonOf(res) })),
      ),
    );
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 402);
    expect(ok.length + refused.length).toBe(500);
    // At least the 50 worst cases fit; settled requests free their unused reservation,
    // so later ones may fit too, but never more than the balance allows at actual cost.
    expect(ok.length).toBeGreaterThanOrEqual(50);
    expect(ok.length).toBeLessThanOrEqual(Math.floor(start / actual));

    await t.flushUsage();
    const balance = await t.store.balanceOf(account.id);
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(await t.store.sumLedger(account.id)).toBe(balance);
    const usage = await t.store.listUsage(account.id, { limit: 1000 });
    expect(usage).toHaveLength(ok.length);
    expect(balance).toBe(start - usage.reduce((sum, u) => sum + u.costMicros, 0));
    expect(balance).toBe(start - ok.length * actual);

    const billing = await jsonOf(await fetch(`${t.origin}/api/billing/subscription`, { headers: { authorization: `Bearer ${apiKey}` } }));
    expect(billing.reserved.micros).toBe(0);
    expect(billing.balance.micros).toBe(balance);
  });
});
