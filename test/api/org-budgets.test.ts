// An organisation's wallet and budgets with the openai client, in one process (SQLite) and
// on two shared-mode instances (PostgreSQL and Redis): a member over their monthly budget,
// or the organisation over its own, gets 402 with `reason` naming the budget and the
// budget's figures; concurrent requests of several members never overdraw the wallet or
// any budget; a budget set takes effect on every instance, and a member removed with their
// keys stops everywhere.
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SPEC_MESSAGES } from '../../src/http/error-reply.js';
import type { Account, Store } from '../../src/store/store.js';
import { startApp } from '../helpers/start-app.js';
import { startCluster } from '../helpers/start-cluster.js';

// 1 input token = 1,000 micro-credits, 1 output token = 2,000.
const OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 2_000, models: ['*'] } },
  models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } } },
};
const HELLO = [{ role: 'user' as const, content: 'Hello there, general Kenobi' }];

type ApiError = InstanceType<typeof OpenAI.APIError>;
const micros = (usage: OpenAI.CompletionUsage | undefined): number => Math.round((usage as OpenAI.CompletionUsage & { cost: number }).cost * 1_000_000);

/** What the suite needs of the deployment, in either mode: its apps (one, or two instances) and a store of its own. */
interface Target {
  apps: { app: FastifyInstance; client(apiKey: string): OpenAI }[];
  store: Store;
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

async function memoryTarget(): Promise<Target> {
  const t = await startApp({ overrides: OVERRIDES });
  return { apps: [{ app: t.app, client: (apiKey) => t.client(apiKey) }], store: t.store, flushUsage: () => t.flushUsage(), close: () => t.close() };
}

async function sharedTarget(): Promise<Target> {
  const cluster = await startCluster(2, OVERRIDES);
  return { apps: cluster.instances, store: cluster.store, flushUsage: () => cluster.flushUsage(), close: () => cluster.close() };
}

describe.each([
  ['one process', memoryTarget],
  ['shared mode, two instances', sharedTarget],
] as const)('an organisation’s budgets, %s', (_mode, start) => {
  let target: Target;
  let orgs = 0;

  beforeAll(async () => {
    target = await start();
  });
  afterAll(() => target.close());

  const commands = () => target.apps[0]!.app.commands;

  /** An organisation with `size` members (the first the owner) and `walletMicros`; each member's key, with a client on every instance. */
  async function newOrg(size: number, walletMicros: number): Promise<{ org: Account; people: Account[]; keyIds: string[]; clients: OpenAI[][] }> {
    const run = `${++orgs}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    const people: Account[] = [];
    for (let i = 0; i < size; i++) people.push(await target.store.createAccount({ email: `member${i}-${run}@example.test`, tier: 'metered' }));
    const org = await commands().orgs.create(`Team ${run}`, people[0]!, 'metered');
    for (const person of people.slice(1)) await commands().orgs.setMember(org.id, person, 'member');
    await commands().credits.grant({ accountId: org.id, amountMicros: walletMicros, reason: 'test' });
    const keyIds: string[] = [];
    const clients: OpenAI[][] = [];
    for (const person of people) {
      const { record, secret } = await commands().keys.create(org.id, `key of ${person.email}`, undefined, undefined, person.id);
      keyIds.push(record.id);
      clients.push(target.apps.map((instance) => instance.client(secret)));
    }
    return { org, people, keyIds, clients };
  }

  const ask = (client: OpenAI, maxTokens = 5) =>
    client.chat.completions.create({ model: 'priced-echo', messages: HELLO, max_tokens: maxTokens }).then(
      (answer) => answer,
      (err: unknown) => {
        if (err instanceof OpenAI.APIError) return err;
        throw err;
      },
    );

  /** Every instance refuses a request whose worst case (1,000 output tokens: 2 credits) passes the budget: it knows of it. */
  async function budgetKnownEverywhere(clients: OpenAI[], reason: string): Promise<void> {
    for (const client of clients) {
      await vi.waitFor(async () => expect(await ask(client, 1_000)).toMatchObject({ status: 402, error: { reason } }), { timeout: 5_000, interval: 50 });
    }
  }

  /** Requests (alternating instances) until one is refused: what was charged meanwhile, and the refusal. */
  async function spendUntilRefused(clients: OpenAI[], maxTokens: number): Promise<{ chargedMicros: number; promptTokens: number; refusal: ApiError }> {
    let chargedMicros = 0;
    let promptTokens = 0;
    for (let i = 0; i < 200; i++) {
      const outcome = await ask(clients[i % clients.length]!, maxTokens);
      if (outcome instanceof OpenAI.APIError) return { chargedMicros, promptTokens, refusal: outcome };
      chargedMicros += micros(outcome.usage);
      promptTokens = outcome.usage!.prompt_tokens;
    }
    throw new Error('no budget refused a request');
  }

  it('a member over their monthly budget gets 402 member_budget with the budget’s figures; the others go on', async () => {
    const { org, people, clients } = await newOrg(3, 10_000_000);
    const budget = 100_000;
    await commands().orgs.setBudget(org.id, people[1]!.id, budget);
    await budgetKnownEverywhere(clients[1]!, 'member_budget');

    const { chargedMicros, promptTokens, refusal } = await spendUntilRefused(clients[1]!, 10);
    expect(refusal.status).toBe(402);
    const available = budget - chargedMicros;
    expect(refusal.error).toMatchObject({
      message: SPEC_MESSAGES[402],
      code: 402,
      reason: 'member_budget',
      credits_required: (promptTokens * 1_000 + 10 * 2_000) / 1_000_000,
      credits_available: available / 1_000_000,
    });
    expect((refusal.error as { hint?: string }).hint ?? '').toContain('the member\'s monthly budget');
    expect(chargedMicros).toBeLessThanOrEqual(budget);
    // The owner and the other member have no budget: the wallet pays them.
    for (const member of [0, 2]) expect(await ask(clients[member]![0]!)).not.toBeInstanceOf(OpenAI.APIError);
  });

  it('the organisation’s own budget holds every member together: 402 org_budget', async () => {
    const { org, clients } = await newOrg(3, 10_000_000);
    const budget = 150_000;
    await commands().orgs.setBudget(org.id, null, budget);
    let charged = 0;
    let refusal: ApiError | undefined;
    for (let i = 0; i < 300 && refusal === undefined; i++) {
      const member = clients[i % 3]!;
      const outcome = await ask(member[i % member.length]!, 10);
      if (outcome instanceof OpenAI.APIError) refusal = outcome;
      else charged += micros(outcome.usage);
    }
    expect(refusal?.status).toBe(402);
    expect(refusal?.error).toMatchObject({ reason: 'org_budget' });
    expect(charged).toBeGreaterThan(0);
    expect(charged).toBeLessThanOrEqual(budget);
    // Removed, it holds no more (every instance hears of it).
    await commands().orgs.setBudget(org.id, null, null);
    for (const client of clients[0]!) await vi.waitFor(async () => expect(await ask(client)).not.toBeInstanceOf(OpenAI.APIError), { timeout: 5_000 });
  });

  it('1,000 concurrent requests of 5 members overdraw neither the wallet nor any budget', async () => {
    // Two members' budgets bind, then the organisation's; a wallet run dry is the other suite's.
    const wallet = 8_000_000;
    const memberBudgets = [1_000_000, 1_000_000, 3_000_000, 3_000_000, 3_000_000];
    const orgBudget = 6_000_000;
    const { org, people, keyIds, clients } = await newOrg(5, wallet);
    await commands().orgs.setBudget(org.id, null, orgBudget);
    for (const [i, person] of people.entries()) await commands().orgs.setBudget(org.id, person.id, memberBudgets[i]!);
    // An instance reads all of an organisation's budgets at once: knowing the last, it knows them all.
    await budgetKnownEverywhere(clients[1]!, 'member_budget');

    const outcomes = await Promise.all(
      Array.from({ length: 1_000 }, async (_, i) => {
        const member = i % 5;
        const outcome = await ask(clients[member]![Math.floor(i / 5) % clients[member]!.length]!, 20);
        return outcome instanceof OpenAI.APIError ? { member, status: outcome.status, reason: (outcome.error as { reason?: string }).reason, charged: 0 } : { member, status: 200, reason: undefined, charged: micros(outcome.usage) };
      }),
    );
    const refused = outcomes.filter((o) => o.status !== 200);
    expect(refused.every((o) => o.status === 402)).toBe(true);
    expect(new Set(refused.map((o) => o.reason))).toEqual(new Set(['member_budget', 'org_budget']));
    const byMember = [0, 1, 2, 3, 4].map((member) => outcomes.filter((o) => o.member === member).reduce((sum, o) => sum + o.charged, 0));
    for (const [i, spent] of byMember.entries()) expect(spent).toBeLessThanOrEqual(memberBudgets[i]!);
    const total = byMember.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(orgBudget);
    // Each request is worth 25,000 at most: the budgets were spent to within one request.
    expect(total).toBeGreaterThan(orgBudget - 2 * 25_000 * 5);
    console.log(`5 members, 1,000 concurrent requests: ${outcomes.length - refused.length} served, ${total} micro-credits spent of an organisation budget of ${orgBudget}, per member ${byMember.join(', ')}`);

    // The store agrees: each member's spending, the wallet, and a ledger that sums to it.
    await target.flushUsage();
    await vi.waitFor(async () => expect(await target.store.spendOf({ accountId: org.id }, null)).toBe(total), { timeout: 10_000, interval: 50 });
    for (const [i, person] of people.entries()) expect(await target.store.spendOf({ accountId: org.id, memberId: person.id }, null)).toBe(byMember[i]);
    for (const [i, keyId] of keyIds.entries()) expect(await target.store.spendOf({ keyId }, null)).toBe(byMember[i]);
    expect(await target.store.balanceOf(org.id)).toBe(wallet - total);
    expect(await target.store.sumLedger(org.id)).toBe(wallet - total);
  });

  it('a member removed with their keys stops on every instance; removed without, their key goes on as the organisation’s', async () => {
    const { org, people, clients } = await newOrg(3, 10_000_000);
    for (const client of [...clients[1]!, ...clients[2]!]) expect(await ask(client)).not.toBeInstanceOf(OpenAI.APIError);
    const revoked = await commands().orgs.removeMember(org.id, people[1]!, true);
    expect(revoked).toMatchObject({ removed: true, revokedKeyIds: [expect.any(String)] });
    for (const client of clients[1]!) await vi.waitFor(async () => expect(await ask(client)).toMatchObject({ status: 401 }), { timeout: 5_000 });
    expect(await commands().orgs.removeMember(org.id, people[2]!, false)).toEqual({ removed: true, revokedKeyIds: [] });
    for (const client of clients[2]!) expect(await ask(client)).not.toBeInstanceOf(OpenAI.APIError);
    // The owner stays: the last owner cannot leave.
    await expect(commands().orgs.removeMember(org.id, people[0]!, false)).rejects.toMatchObject({ code: 'org_last_owner' });
  });
});
