// The dashboard's alerts (GET/PUT /api/dashboard/alerts) for the account the session acts
// for: a person's own, or their organisation's; reading them is open to every member,
// changing them takes an owner or an admin (the budgets permission).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { expectUnifiedError, sessionClient } from './dashboard-client.js';

describe('alerts in the dashboard', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('a person sets alerts on their own account, and an organisation’s admin on the organisation’s', async () => {
    const person = await sessionClient(t);
    expect((await person.get('/alerts')).body).toEqual({ balanceBelowMicros: null, balanceAlertArmed: true, budgetThresholds: [50, 80, 100], defaultThresholds: true });
    const saved = await person.request('PUT', '/alerts', { body: { balanceBelowMicros: 2_000_000 } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body).toMatchObject({ balanceBelowMicros: 2_000_000, defaultThresholds: true });
    expect((await t.store.findAlertSettings(person.account.id)).balanceBelowMicros).toBe(2_000_000);

    const owner = await sessionClient(t);
    const orgId = (await owner.post('/orgs', { name: `Alerted ${process.pid} ${Date.now()}` })).body.org.id as string;
    const roles = { admin: await sessionClient(t), billing: await sessionClient(t), member: await sessionClient(t) };
    for (const [role, client] of Object.entries(roles)) {
      expect((await owner.post('/orgs/current/members', { email: client.account.email, role })).status).toBe(200);
      expect((await client.post('/orgs/switch', { orgId })).status).toBe(204);
    }
    const set = await roles.admin.request('PUT', '/alerts', { body: { budgetThresholds: [90, 60] } });
    expect(set.status, set.text).toBe(200);
    expect(set.body).toMatchObject({ budgetThresholds: [60, 90], defaultThresholds: false });
    expect((await t.store.findAlertSettings(orgId)).budgetThresholds).toEqual([60, 90]);
    // Everyone reads them; a billing member or a member cannot change them.
    for (const client of [roles.billing, roles.member, owner]) expect((await client.get('/alerts')).body).toMatchObject({ budgetThresholds: [60, 90] });
    for (const client of [roles.billing, roles.member]) expectUnifiedError(await client.request('PUT', '/alerts', { body: { budgetThresholds: null } }), 403);
    // The person's own account is untouched.
    expect((await person.get('/alerts')).body.budgetThresholds).toEqual([50, 80, 100]);
  });

  it('refuses percentages outside 1 to 100 with 422 naming the field', async () => {
    const person = await sessionClient(t);
    const refused = await person.request('PUT', '/alerts', { body: { budgetThresholds: [50, 150] } });
    expectUnifiedError(refused, 422);
    expect(JSON.stringify(refused.body)).toContain('budgetThresholds');
  });
});
