// The domain's write operations, by domain. The dashboard, the CLI, the admin API and
// payment webhooks change accounts, keys and credits only through these. Each is one store
// transaction that writes the change and its change events (so every instance follows),
// then brings this process's caches up to date at once (unit-of-work.ts). An admin action
// names its `actor`: its audit row is written in the same transaction, so no change goes
// unrecorded.
import { NO_LOCAL_CACHES, type LocalCaches } from '../cluster/local-caches.js';
import type { Store } from '../store/store.js';
import { AccountCommands } from './accounts.js';
import { AdminKeyCommands } from './admin-keys.js';
import { AlertCommands } from './alerts.js';
import { CodeCommands } from './codes.js';
import { CreditCommands } from './credits.js';
import { InvitationCommands } from './invitations.js';
import { KeyCommands } from './keys.js';
import { OrgCommands } from './orgs.js';
import { PaymentCommands } from './payments.js';
import { WebhookCommands } from './webhooks.js';
import { OidcIdentityCommands } from './oidc-identities.js';

export class Commands {
  readonly accounts: AccountCommands;
  readonly keys: KeyCommands;
  readonly credits: CreditCommands;
  readonly codes: CodeCommands;
  readonly adminKeys: AdminKeyCommands;
  readonly payments: PaymentCommands;
  readonly orgs: OrgCommands;
  readonly webhooks: WebhookCommands;
  readonly oidcIdentities: OidcIdentityCommands;
  readonly alerts: AlertCommands;
  readonly invitations: InvitationCommands;

  constructor(store: Store, caches: LocalCaches = NO_LOCAL_CACHES) {
    this.accounts = new AccountCommands(store, caches);
    this.keys = new KeyCommands(store, caches);
    this.credits = new CreditCommands(store, caches);
    this.codes = new CodeCommands(store, caches);
    this.adminKeys = new AdminKeyCommands(store, caches);
    this.payments = new PaymentCommands(store, caches);
    this.orgs = new OrgCommands(store, caches);
    this.webhooks = new WebhookCommands(store, caches);
    this.oidcIdentities = new OidcIdentityCommands(store, caches);
    this.alerts = new AlertCommands(store, caches);
    this.invitations = new InvitationCommands(store, caches);
  }
}
