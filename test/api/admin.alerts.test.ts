// An account's (an organisation's) alerts through the admin API: shown with the defaults,
// set and cleared, refused when malformed; a write needs the accounts scope and is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SCOPES } from '../../src/auth/admin-key.js';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { adminCall, adminKey } from './admin-client.js';

describe('alerts through the admin API', () => {
  let t: TestApp;
  let bearer: string;
  const call = (method: string, path: string, body?: unknown) => adminCall(t, { bearer }, method, path, body);

  beforeAll(async () => {
    t = await startApp();
    bearer = await adminKey(t, [...ADMIN_SCOPES]);
  });
  afterAll(() => t.close());

  it('shows the defaults, sets a balance threshold and budget percentages, and clears them', async () => {
    const { account } = await t.createAccount();
    const org = await t.app.commands.orgs.create(`Alerted ${Date.now()}`, account, t.config.default_tier);
    const path = `/accounts/${org.id}/alerts`;
    expect(await call('GET', path)).toMatchObject({
      status: 200,
      body: { account_id: org.id, balance_below_micros: null, balance_alert_armed: true, budget_thresholds: [50, 80, 100], default_thresholds: true },
    });
    const set = await call('PUT', path, { balance_below_micros: 5_000_000, budget_thresholds: [90, 75] });
    expect(set).toMatchObject({ status: 200, body: { balance_below_micros: 5_000_000, budget_thresholds: [75, 90], default_thresholds: false } });
    // A field left out stays.
    expect((await call('PUT', path, { budget_thresholds: null })).body).toMatchObject({ balance_below_micros: 5_000_000, budget_thresholds: [50, 80, 100], default_thresholds: true });
    expect((await call('PUT', path, { balance_below_micros: null })).body).toMatchObject({ balance_below_micros: null });

    const audit = await t.store.listAudit({ limit: 5, targetId: org.id });
    expect(audit.filter((entry) => entry.action === 'account.set_alerts')).toHaveLength(3);
    expect(audit[audit.length - 1]).toMatchObject({ action: 'account.set_alerts' });
  });

  it('refuses thresholds outside 1 to 100 with 422, and an unknown account with 404', async () => {
    const { account } = await t.createAccount();
    for (const body of [{ budget_thresholds: [0] }, { budget_thresholds: [101] }, { budget_thresholds: [] }, { balance_below_micros: -5 }]) {
      expect((await call('PUT', `/accounts/${account.id}/alerts`, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await call('GET', '/accounts/acct_nobody/alerts')).status).toBe(404);
  });
});
