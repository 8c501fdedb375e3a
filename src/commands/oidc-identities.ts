// Sign-in with OpenID Connect, written: an identity linked to an existing account (found by
// its verified email), an account made at a person's first sign-in with its identity (no
// password: it signs in through the provider, or sets one through "Forgot password"), and
// each later sign-in noted on the identity.
import type { NewOidcIdentity } from '../store/oidc-identities.js';
import type { Account } from '../store/store.js';
import { CommandSet } from './unit-of-work.js';

export interface FirstSignInAccount {
  email: string;
  name: string | null;
  tier: string;
  /** The sign-up credits, as a password sign-up gets them; 0 for none. */
  creditsMicros: number;
}

export class OidcIdentityCommands extends CommandSet {
  /** Links the identity to an account the person already has (their address was verified by the provider). */
  link(identity: NewOidcIdentity): Promise<void> {
    return this.store.linkOidcIdentity(identity, new Date().toISOString());
  }

  /** A new account with the identity that signs in to it, all or nothing. Throws EmailTakenError. */
  createAccount(input: FirstSignInAccount, identity: Omit<NewOidcIdentity, 'accountId'>): Promise<Account> {
    return this.commit(async (tx) => {
      const account = await tx.createAccount({ email: input.email, name: input.name, tier: input.tier });
      if (input.creditsMicros > 0) {
        await tx.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: input.creditsMicros, reason: 'sign-up credits' });
      }
      await tx.linkOidcIdentity({ ...identity, accountId: account.id }, new Date().toISOString());
      return account;
    });
  }

  recordSignIn(issuer: string, subject: string, email: string): Promise<void> {
    return this.store.recordOidcSignIn(issuer, subject, email, new Date().toISOString());
  }
}
