// What the alert suites share: priced requests whose cost is exactly their worst case (so
// spending can reach a budget to the micro-credit), an organisation with an owner, a
// billing member and a member with a key, and a webhook endpoint subscribed to alerts.
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import type { Account, Store } from '../../src/store/store.js';
import type { WebhookEndpoint } from '../../src/store/webhook-store.js';

// 1 input token = 1,000 micro-credits, 1 output token = 2,000; the echo answers more than
// 3 tokens, so every request spends its worst case.
export const ALERT_OVERRIDES = {
  default_tier: 'metered',
  tiers: { metered: { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 2_000, models: ['*'] } },
  models: { 'priced-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, max_output: 1000, price: { input: 1000, output: 2000 } } },
  webhooks: { allow_private_addresses: true },
};
export const MAX_TOKENS = 3;

export function ask(client: OpenAI): Promise<OpenAI.ChatCompletion | InstanceType<typeof OpenAI.APIError>> {
  return client.chat.completions.create({ model: 'priced-echo', messages: [{ role: 'user', content: 'Hello there, general Kenobi' }], max_tokens: MAX_TOKENS }).then(
    (answer) => answer,
    (err: unknown) => {
      if (err instanceof OpenAI.APIError) return err;
      throw err;
    },
  );
}

export function costOf(answer: OpenAI.ChatCompletion | InstanceType<typeof OpenAI.APIError>): number {
  if (answer instanceof OpenAI.APIError) throw new Error(`refused: ${answer.status} ${JSON.stringify(answer.error)}`);
  return Math.round((answer.usage as OpenAI.CompletionUsage & { cost: number }).cost * 1_000_000);
}

export interface AlertOrg {
  org: Account;
  owner: Account;
  billing: Account;
  member: Account;
  /** The member's key, and the owner's (no budget of their own). */
  memberKey: string;
  ownerKey: string;
  endpoint: WebhookEndpoint;
  secret: string;
}

let orgs = 0;

export async function newAlertOrg(app: FastifyInstance, store: Store, walletMicros: number, receiverUrl: string): Promise<AlertOrg> {
  const run = `${++orgs}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const [owner, billing, member] = await Promise.all(['owner', 'billing', 'member'].map((who) => store.createAccount({ email: `${who}-${run}@example.test`, tier: 'metered' })));
  const org = await app.commands.orgs.create(`Alerted ${run}`, owner!, 'metered');
  await app.commands.orgs.setMember(org.id, billing!, 'billing');
  await app.commands.orgs.setMember(org.id, member!, 'member');
  await app.commands.credits.grant({ accountId: org.id, amountMicros: walletMicros, reason: 'test' });
  const memberKey = (await app.commands.keys.create(org.id, 'member key', undefined, undefined, member!.id)).secret;
  const ownerKey = (await app.commands.keys.create(org.id, 'owner key', undefined, undefined, owner!.id)).secret;
  const { endpoint, secret } = await app.commands.webhooks.add(org.id, receiverUrl, ['budget.threshold', 'balance.low']);
  return { org, owner: owner!, billing: billing!, member: member!, memberKey, ownerKey, endpoint, secret };
}
