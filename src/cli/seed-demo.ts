// First start on an empty store: a demo account and key, so `npm start` is enough to try it.
import { createApiKey } from '../auth/keys.js';
import { creditsToMicros } from '../billing/money.js';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/store.js';

export async function seedDemoAccount(store: Store, config: Config): Promise<{ email: string; secret: string } | undefined> {
  if (!config.demo.seed_account) return undefined;
  if ((await store.listAccounts()).length > 0) return undefined;
  const account = await store.createAccount({ email: config.demo.email, name: 'Demo', tier: config.default_tier });
  const credits = creditsToMicros(config.demo.credits);
  if (credits > 0) await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: credits, reason: 'demo credits' });
  const { secret } = await createApiKey(store, account.id, 'demo');
  return { email: account.email, secret };
}
