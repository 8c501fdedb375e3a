// Balance and budget alerts in one process (SQLite), end to end: a member's spending
// crossing 50 %, 80 % and 100 % of their budget sends one budget.threshold webhook per
// threshold (to a real receiver, verified with the standardwebhooks package) and one mail
// each (through a real SMTP server) to the organisation's owners and billing members; a
// crossing alerted never alerts again, a new month (the clock moved) arms the thresholds
// again; a balance below its threshold alerts once and again only after a top-up.
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startApp, type TestApp } from '../helpers/start-app.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import { verified } from '../webhooks/webhook-fixture.js';
import { ALERT_OVERRIDES, ask, costOf, newAlertOrg, type AlertOrg } from './alert-fixture.js';

describe('alerts, one process', () => {
  let t: TestApp;
  let inbox: SmtpInbox;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    receiver = await startWebhookReceiver();
    t = await startApp({
      overrides: { ...ALERT_OVERRIDES, smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <alerts@example.test>' } },
      webhooks: { allowPrivateAddresses: true, pollMs: 20 },
    });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await inbox?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Usage written and every check it asked for done (with its mail). */
  async function settled(): Promise<void> {
    await t.flushUsage();
    await t.app.alerts.idle();
  }

  /** The data of the `type` events the receiver got signed with `secret` (one endpoint's), verified. */
  function received(secret: string, type: string): Record<string, unknown>[] {
    return receiver.received
      .filter((request) => {
        try {
          return verified(secret, request).type === type;
        } catch {
          return false; // another endpoint's, signed with its own secret
        }
      })
      .map((request) => verified(secret, request).data);
  }

  const alertsOf = (o: AlertOrg, type: string): Record<string, unknown>[] => received(o.secret, type);

  async function deliveredCount(o: AlertOrg, type: string): Promise<number> {
    return (await t.store.listWebhookDeliveries(o.endpoint.id)).filter((delivery) => delivery.eventType === type).length;
  }

  /** The cost of one request (its worst case), measured on the owner's key, which no budget holds. */
  async function costOfOne(o: AlertOrg): Promise<number> {
    const cost = costOf(await ask(t.client(o.ownerKey)));
    await settled();
    return cost;
  }

  it('a member crossing 50 %, 80 % and 100 % of their budget: one webhook and one mail per owner and billing member for each, never twice', async () => {
    const o = await newAlertOrg(t.app, t.store, 10_000_000, receiver.url);
    const cost = await costOfOne(o);
    const budget = 10 * cost;
    await t.app.commands.orgs.setBudget(o.org.id, o.member.id, budget);
    const member = t.client(o.memberKey);

    const crossedAfter: Record<number, number> = {};
    for (let i = 1; i <= 10; i++) {
      expect(costOf(await ask(member))).toBe(cost);
      await settled();
      crossedAfter[i] = await deliveredCount(o, 'budget.threshold');
    }
    // 5 requests are 50 %, 8 are 80 %, 10 the whole budget; each alerted as it was crossed.
    expect(crossedAfter).toEqual({ 1: 0, 2: 0, 3: 0, 4: 0, 5: 1, 6: 1, 7: 1, 8: 2, 9: 2, 10: 3 });
    // The budget is spent: refused, and nothing more to alert.
    expect(await ask(member)).toMatchObject({ status: 402, error: { reason: 'member_budget' } });
    await ask(t.client(o.ownerKey));
    await settled();
    expect(await deliveredCount(o, 'budget.threshold')).toBe(3);

    await vi.waitFor(() => expect(alertsOf(o, 'budget.threshold')).toHaveLength(3), { timeout: 10_000, interval: 20 });
    expect(alertsOf(o, 'budget.threshold')).toEqual([50, 80, 100].map((percent, i) => ({
      account_id: o.org.id,
      member_id: o.member.id,
      period: 'month',
      limit_micros: budget,
      spent_micros: [5, 8, 10][i]! * cost,
      threshold_percent: percent,
    })));

    for (const person of [o.owner, o.billing]) {
      const mails = [await inbox.next(person.email), await inbox.next(person.email), await inbox.next(person.email)];
      expect(mails.map((mail) => mail.subject)).toEqual([50, 80, 100].map((percent) => `lmgate: ${percent} % of the monthly budget of ${o.member.email} in ${o.org.name} used`));
      expect(mails[2]!.text).toContain(`of ${budget / 1_000_000} credits`);
    }
    await expect(inbox.next(o.owner.email, 300)).rejects.toThrow(/no mail/);
    // Neither the member (no paying role) nor the organisation's placeholder address is mailed.
    expect(inbox.messages.some((mail) => mail.to.includes(o.member.email) || mail.to.some((to) => to.endsWith('@org.invalid')))).toBe(false);
  });

  it('a new month arms every threshold again; so does a raised budget', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2027-01-31T23:00:00.000Z'));
    const o = await newAlertOrg(t.app, t.store, 10_000_000, receiver.url);
    const cost = await costOfOne(o);
    await t.app.commands.orgs.setBudget(o.org.id, o.member.id, 4 * cost);
    const member = t.client(o.memberKey);
    for (let i = 0; i < 2; i++) costOf(await ask(member));
    await settled();
    expect(await deliveredCount(o, 'budget.threshold')).toBe(1); // 50 % in January

    vi.setSystemTime(Date.parse('2027-02-01T00:00:05.000Z'));
    for (let i = 0; i < 2; i++) costOf(await ask(member));
    await settled();
    expect(await deliveredCount(o, 'budget.threshold')).toBe(2); // 50 % in February, once more

    // Raised: 2 of 5 is under 50 %, 3 of 5 is 60 %: the 50 % threshold alerts again.
    await t.app.commands.orgs.setBudget(o.org.id, o.member.id, 5 * cost);
    costOf(await ask(member));
    await settled();
    expect(await deliveredCount(o, 'budget.threshold')).toBe(3);
    // The app's sender keeps the real clock (for it these events are due next year): one on the moved clock sends them.
    const sender = new WebhookWorker(t.store, { now: () => Date.now(), allowPrivateAddresses: true, timeoutMs: 5_000 });
    try {
      while (alertsOf(o, 'budget.threshold').length < 3) expect(await sender.deliverDue()).toBeGreaterThan(0);
    } finally {
      await sender.stop();
    }
    expect(alertsOf(o, 'budget.threshold').map((data) => [data.threshold_percent, data.limit_micros, data.spent_micros])).toEqual([
      [50, 4 * cost, 2 * cost],
      [50, 4 * cost, 2 * cost],
      [50, 5 * cost, 3 * cost],
    ]);
  });

  it('a balance below its threshold alerts once, by webhook and mail to the person; a top-up arms it again', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1 });
    const { endpoint, secret } = await t.app.commands.webhooks.add(account.id, receiver.url, ['balance.low']);
    const client = t.client(apiKey);
    const cost = costOf(await ask(client));
    await settled();
    const threshold = 1_000_000 - 3 * cost - cost / 2; // crossed by the fourth request
    await t.app.commands.alerts.set(account.id, { balanceBelowMicros: threshold });

    const lows = async () => (await t.store.listWebhookDeliveries(endpoint.id)).filter((d) => d.eventType === 'balance.low').length;
    for (let i = 2; i <= 6; i++) {
      costOf(await ask(client));
      await settled();
      expect(await lows()).toBe(i >= 4 ? 1 : 0);
    }
    const mail = await inbox.next(account.email);
    expect(mail.subject).toBe(`lmgate: the balance of your account is below ${threshold / 1_000_000} credits`);
    expect(mail.text).toContain(`is ${(1_000_000 - 4 * cost) / 1_000_000} credits`);

    // A grant that leaves it below arms nothing; one that lifts it over does.
    await t.app.commands.credits.grant({ accountId: account.id, amountMicros: cost, reason: 'a little' });
    costOf(await ask(client));
    await settled();
    expect(await lows()).toBe(1);
    await t.app.commands.credits.grant({ accountId: account.id, amountMicros: 3 * cost, reason: 'enough' });
    expect((await t.store.findAlertSettings(account.id)).balanceArmed).toBe(true);
    costOf(await ask(client));
    await settled();
    expect(await lows()).toBe(2);

    await vi.waitFor(() => expect(received(secret, 'balance.low')).toHaveLength(2), { timeout: 10_000, interval: 20 });
    expect(received(secret, 'balance.low')).toEqual([
      { account_id: account.id, balance_micros: 1_000_000 - 4 * cost, threshold_micros: threshold },
      // 7 requests, 4 credited back: the fourth crossing's balance again.
      { account_id: account.id, balance_micros: 1_000_000 - 8 * cost + 4 * cost, threshold_micros: threshold },
    ]);
    expect((await inbox.next(account.email)).subject).toContain('is below');
  });

  it('is not on the request path: an account with nothing to watch is read once a while, not once per batch', async () => {
    const { apiKey } = await t.createAccount({ credits: 5 });
    const client = t.client(apiKey);
    const reads = vi.spyOn(t.store, 'findAlertSettings');
    try {
      for (let i = 0; i < 5; i++) {
        expect(await ask(client)).not.toBeInstanceOf(OpenAI.APIError);
        await settled();
      }
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });
});
