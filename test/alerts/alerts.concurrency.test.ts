// Alerts on two shared-mode instances (PostgreSQL and Redis): both write usage batches of
// the same organisation and check it at the same moments, yet each crossing (a member's
// budget at 50, 80 and 100 %, the wallet below its threshold) is claimed once: one
// webhook event and one mail per recipient, whatever instance checked first.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type TestCluster } from '../helpers/start-cluster.js';
import { startSmtpInbox, type SmtpInbox } from '../helpers/smtp-inbox.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { verified } from '../webhooks/webhook-fixture.js';
import { ALERT_OVERRIDES, ask, costOf, newAlertOrg } from './alert-fixture.js';

describe('alerts on two shared-mode instances', () => {
  let cluster: TestCluster;
  let inbox: SmtpInbox;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    inbox = await startSmtpInbox();
    receiver = await startWebhookReceiver();
    cluster = await startCluster(2, { ...ALERT_OVERRIDES, smtp: { host: '127.0.0.1', port: inbox.port, from: 'lmgate <alerts@example.test>' } });
  });
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
    await inbox?.close();
  });

  it('many concurrent requests on both instances: exactly one alert per crossing', async () => {
    const [a, b] = cluster.instances;
    const wallet = 10_000_000;
    const o = await newAlertOrg(a!.app, cluster.store, wallet, receiver.url);
    const cost = costOf(await ask(a!.client(o.ownerKey)));
    await a!.app.commands.orgs.setBudget(o.org.id, o.member.id, 20 * cost);
    // Crossed by the wallet's 12th request (the owner's was the first).
    await a!.app.commands.alerts.set(o.org.id, { balanceBelowMicros: wallet - 11 * cost - cost / 2 });
    // Both instances know the budget before the burst (each refuses a request past it).
    await b!.app.changeFeed.poll();

    const clients = [a!.client(o.memberKey), b!.client(o.memberKey)];
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => ask(clients[i % 2]!)));
    const served = outcomes.filter((outcome) => !(outcome instanceof OpenAI.APIError));
    expect(served).toHaveLength(20);
    for (const outcome of served) expect(costOf(outcome)).toBe(cost);

    await cluster.flushUsage();
    await Promise.all(cluster.instances.map((instance) => instance.app.alerts.idle()));
    const deliveries = await cluster.store.listWebhookDeliveries(o.endpoint.id);
    expect(deliveries.filter((d) => d.eventType === 'budget.threshold')).toHaveLength(3);
    expect(deliveries.filter((d) => d.eventType === 'balance.low')).toHaveLength(1);

    await receiver.waitFor(4);
    const bodies = receiver.received.map((request) => verified(o.secret, request));
    expect(bodies.filter((body) => body.type === 'budget.threshold').map((body) => body.data.threshold_percent).sort()).toEqual([100, 50, 80]);
    expect(bodies.find((body) => body.type === 'balance.low')!.data).toMatchObject({ account_id: o.org.id, threshold_micros: wallet - 11 * cost - cost / 2 });

    for (const person of [o.owner, o.billing]) {
      const subjects = [];
      for (let i = 0; i < 4; i++) subjects.push((await inbox.next(person.email)).subject);
      expect(subjects.filter((subject) => subject.includes('is below'))).toHaveLength(1);
      await expect(inbox.next(person.email, 300)).rejects.toThrow(/no mail/);
    }
  });

  it('1,000 concurrent requests of 5 members on both instances: no budget or wallet overdrawn, and one alert per crossing', async () => {
    const [a, b] = cluster.instances;
    const wallet = 10_000_000;
    const o = await newAlertOrg(a!.app, cluster.store, wallet, receiver.url);
    const cost = costOf(await ask(a!.client(o.ownerKey)));
    // Five members (the fixture's member and four more), each with a key and a budget of 20 requests.
    const members = [o.member];
    for (let i = 0; i < 4; i++) {
      const person = await cluster.store.createAccount({ email: `extra${i}-${o.org.id}@example.test`, tier: 'metered' });
      await a!.app.commands.orgs.setMember(o.org.id, person, 'member');
      members.push(person);
    }
    const keys = [o.memberKey];
    for (const person of members.slice(1)) keys.push((await a!.app.commands.keys.create(o.org.id, 'k', undefined, undefined, person.id)).secret);
    for (const person of members) await a!.app.commands.orgs.setBudget(o.org.id, person.id, 20 * cost);
    // The wallet crosses its threshold at the 51st request (the owner's was the first).
    const threshold = wallet - 50 * cost - cost / 2;
    await a!.app.commands.alerts.set(o.org.id, { balanceBelowMicros: threshold });
    await b!.app.changeFeed.poll();

    const outcomes = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => {
        const member = i % 5;
        return ask((i % 2 === 0 ? a! : b!).client(keys[member]!)).then((outcome) => ({ member, outcome }));
      }),
    );
    for (let member = 0; member < 5; member++) {
      const served = outcomes.filter((o) => o.member === member && !(o.outcome instanceof OpenAI.APIError));
      expect(served, `member ${member}`).toHaveLength(20);
    }
    const refused = outcomes.filter((o) => o.outcome instanceof OpenAI.APIError).map((o) => o.outcome as InstanceType<typeof OpenAI.APIError>);
    expect(refused.every((err) => err.status === 402 && (err.error as { reason?: string }).reason === 'member_budget')).toBe(true);

    await cluster.flushUsage();
    await Promise.all(cluster.instances.map((instance) => instance.app.alerts.idle()));
    expect(await cluster.store.balanceOf(o.org.id)).toBe(wallet - 101 * cost);
    expect(await cluster.store.sumLedger(o.org.id)).toBe(wallet - 101 * cost);
    const deliveries = await cluster.store.listWebhookDeliveries(o.endpoint.id);
    const thresholds = deliveries.filter((d) => d.eventType === 'budget.threshold');
    expect(thresholds).toHaveLength(15);
    expect(deliveries.filter((d) => d.eventType === 'balance.low')).toHaveLength(1);
    await receiver.waitFor(4 + 16);
    const bodies = receiver.received.slice(4).map((request) => verified(o.secret, request));
    for (const person of members) {
      const mine = bodies.filter((body) => body.type === 'budget.threshold' && body.data.member_id === person.id).map((body) => body.data.threshold_percent);
      expect(mine.sort(), person.email).toEqual([100, 50, 80]);
    }
  });
});
