// Which account a person the provider vouched for signs in to: the one their identity
// (issuer, subject) is linked to; else the account with their address, which the provider
// verified, linking the identity to it; else one made now, without a password, when
// accounts may be made at all (open sign-up, or an operator who named the domains that
// may sign in). Every write goes through the commands.
import { creditsToMicros } from '../money.js';
import type { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { EmailTakenError } from '../errors.js';
import type { Account, Store } from '../store/store.js';
import { OidcSignInRefusal, type OidcPerson } from './oidc-sign-in.js';

export interface OidcAccountDeps {
  config: Config;
  store: Pick<Store, 'findOidcIdentity' | 'findOidcIdentityOfAccount' | 'findAccount'>;
  commands: Pick<Commands, 'oidcIdentities'>;
}

/** The account, and whether it was made by this sign-in (its first). */
export async function findOrCreateOidcAccount(deps: OidcAccountDeps, person: OidcPerson): Promise<{ account: Account; created: boolean }> {
  const { store, commands, config } = deps;
  const identity = await store.findOidcIdentity(person.issuer, person.subject);
  if (identity !== undefined) {
    const account = await store.findAccount(identity.accountId);
    if (account === undefined) throw new OidcSignInRefusal('no_account');
    await commands.oidcIdentities.recordSignIn(person.issuer, person.subject, person.email);
    return { account, created: false };
  }
  const existing = await store.findAccount(person.email);
  if (existing !== undefined) {
    // An account signs in as one person at a provider: an address the provider has since
    // given to someone else (a new subject) does not open the old owner's account.
    if ((await store.findOidcIdentityOfAccount(person.issuer, existing.id)) !== undefined) throw new OidcSignInRefusal('taken');
    await commands.oidcIdentities.link({ issuer: person.issuer, subject: person.subject, accountId: existing.id, email: person.email });
    return { account: existing, created: false };
  }
  if (!mayCreateAccounts(config)) throw new OidcSignInRefusal('no_account');
  try {
    const account = await commands.oidcIdentities.createAccount(
      { email: person.email, name: person.name, tier: config.default_tier, creditsMicros: creditsToMicros(config.signup.credits) },
      { issuer: person.issuer, subject: person.subject, email: person.email },
    );
    return { account, created: true };
  } catch (err) {
    // The same person signing in twice at once: the other sign-in made the account.
    if (err instanceof EmailTakenError) return findOrCreateOidcAccount(deps, person);
    throw err;
  }
}

/** Sign-up open, or domains named by the operator: a provider open to anyone must not open a closed lmgate. */
function mayCreateAccounts(config: Config): boolean {
  return config.signup.open || (config.auth.oidc?.allowed_domains.length ?? 0) > 0;
}
