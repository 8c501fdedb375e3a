// First start on an empty store: a demo account and key, so `npm start` is enough to try it.
import type { Commands } from '../commands/commands.js';
import { creditsToMicros } from '../money.js';
import type { Config } from '../config/schema.js';
import type { AccountQueries } from '../store/queries.js';

export async function seedDemoAccount(store: Pick<AccountQueries, 'listAccounts'>, commands: Commands, config: Config): Promise<{ email: string; secret: string } | undefined> {
  if (!config.demo.seed_account) return undefined;
  if ((await store.listAccounts()).length > 0) return undefined;
  const { account } = await commands.accounts.create({
    email: config.demo.email,
    name: 'Demo',
    tier: config.default_tier,
    creditsMicros: creditsToMicros(config.demo.credits),
    creditsReason: 'demo credits',
  });
  const { secret } = await commands.keys.create(account.id, 'demo');
  return { email: account.email, secret };
}
