// Complimentary plans through the admin API, on SQLite and PostgreSQL: a tier that needs a
// subscription the account lacks is set with a warning and refused on /v1 (403
// subscription_inactive); with comp the same tier answers, the audit log records it, and a
// comp whose end has passed is refused again, by itself. One rule decides all three
// (billing/tiers.ts standingOf): the API's refusal, the admin view's standing and the warning.
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { adminCall, adminKey } from './admin-client.js';

describe.each(['sqlite', 'postgres'] as const)('complimentary plans through the admin API on %s', (database) => {
  let t: TestApp;
  let bearer: string;
  const call = (method: string, path: string, body?: unknown) => adminCall(t, { bearer }, method, path, body);
  async function chatStatus(apiKey: string): Promise<number | string> {
    try {
      await t.client(apiKey).chat.completions.create({ model: 'demo-echo', messages: [{ role: 'user', content: 'hi' }] });
      return 200;
    } catch (err) {
      if (err instanceof APIError) return `${err.status} ${(err.error as { reason?: string } | undefined)?.reason ?? ''}`.trim();
      throw err;
    }
  }

  beforeAll(async () => {
    t = await startApp({ database });
    bearer = await adminKey(t, [...ADMIN_SCOPES]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('warns on a tier the account cannot use, then gives it complimentary until a date, audited', async () => {
    const { account, apiKey } = await t.createAccount();
    const plain = await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro' });
    expect(plain.status).toBe(200);
    expect(plain.body.warning).toMatch(/^pro needs a subscription .* does not have: every API call is refused \(403 subscription_inactive\)/);
    expect(plain.body.account).toMatchObject({ tier: 'pro', standing: 'subscription_required', comp_until: null });
    await t.syncChanges();
    expect(await chatStatus(apiKey)).toMatch(/^403/);

    const comp = await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro', comp: true, comp_until: '2099-12-31' });
    expect(comp.status).toBe(200);
    expect(comp.body).toMatchObject({ warning: null, account: { tier: 'pro', standing: 'complimentary', comp_until: '2100-01-01T00:00:00.000Z' } });
    await t.syncChanges();
    expect(await chatStatus(apiKey)).toBe(200);

    const audit = await call('GET', `/audit?target_id=${account.id}`);
    const tierRows = audit.body.entries.filter((e: { action: string }) => e.action === 'account.set_tier');
    expect(tierRows.map((e: { before: unknown; after: unknown }) => [e.before, e.after])).toEqual([
      [{ tier: 'pro' }, { tier: 'pro', comp_until: '2100-01-01T00:00:00.000Z' }],
      [{ tier: 'free' }, { tier: 'pro' }],
    ]);

    // Back to a plain tier change: the comp ends with it.
    expect((await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro' })).body.account.standing).toBe('subscription_required');
  });

  it('a comp without an end lasts; one whose end has passed is refused by itself', async () => {
    const { account, apiKey } = await t.createAccount();
    const open = await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro', comp: true });
    expect(open.body.account).toMatchObject({ standing: 'complimentary', comp_until: null });
    await t.syncChanges();
    expect(await chatStatus(apiKey)).toBe(200);

    // The store's own write with an end a second from now: no change event marks the end.
    await t.store.setAccountTier(account.id, 'pro', { until: new Date(Date.now() + 1_000).toISOString() });
    await t.syncChanges();
    expect(await chatStatus(apiKey)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await chatStatus(apiKey)).toMatch(/^403/);
    expect((await call('GET', `/accounts/${account.id}`)).body.account).toMatchObject({ standing: 'subscription_required', comp_until: null });
  });

  it('refuses a comp end that has passed or is not a date, and an end without comp', async () => {
    const { account } = await t.createAccount();
    const past = await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro', comp: true, comp_until: '2020-01-01' });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual({ comp_until: ['This moment has passed.'] });
    expect((await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro', comp: true, comp_until: 'soon' })).status).toBe(422);
    expect((await call('POST', `/accounts/${account.id}/tier`, { tier: 'pro', comp_until: '2099-01-01' })).body.errors).toEqual({ comp_until: ['Goes with comp: true.'] });
    expect((await t.store.findAccount(account.id))?.tier).toBe('free');
  });
});
