// The Store port cut into roles: each consumer names the few methods it uses, so a route or
// service cannot write what it should only read, and a test's fake needs only those methods.
// Writes to accounts, keys and credits go through commands (src/commands/), which alone take
// the whole Store; the app's composition roots (app.ts, cli/context.ts) own it.
import type { Store } from './store.js';

/** Surfaces and the CLI: look an account up, page through them, count accounts on unknown tiers. */
export type AccountQueries = Pick<Store, 'findAccount' | 'listAccounts' | 'searchAccounts' | 'countAccountsOutsideTiers'>;

/** Sign-in: the password hash a sign-in is checked against. */
export type CredentialQueries = Pick<Store, 'findPasswordHash'>;

/** Sign-in with OpenID Connect: the account a provider's identity is linked to, and the organisation a first sign-in joins. */
export type OidcIdentityQueries = Pick<Store, 'findOidcIdentity' | 'findOidcIdentityOfAccount' | 'findOrg'>;

/** Authentication and the key pages: keys by hash, by id, per account. */
export type KeyQueries = Pick<Store, 'findKeyByHash' | 'findKeyById' | 'listKeys'>;

/** An account's stored balance and ledger entries (the surfaces show live balances from billing/balances.ts). */
export type LedgerQueries = Pick<Store, 'balanceOf' | 'listLedger'>;

/** The dashboard's usage and request log, and the operator's usage report. */
export type UsageQueries = Pick<Store, 'listUsage' | 'summarizeUsage' | 'reportUsage' | 'listRequestLog' | 'exportUsage'>;

/** The operator's list of redemption codes. */
export type CodeQueries = Pick<Store, 'listRedemptionCodes' | 'findRedemptionCode'>;

/** Payments as the dashboard and the CLI show them, and the Stripe customer checkout starts from. */
export type PaymentQueries = Pick<Store, 'findPayment' | 'listPayments' | 'findAutoRecharge' | 'findStripeCustomer' | 'findStripeEvent' | 'listStripeEvents'>;

/** An account's webhook endpoints and their deliveries, as the dashboard shows them. */
export type WebhookQueries = Pick<Store, 'findWebhookEndpoint' | 'listWebhookEndpoints' | 'listWebhookDeliveries'>;

/** Organisations as the surfaces and the CLI read them: members, memberships, budgets. */
export type OrgQueries = Pick<Store, 'findOrg' | 'listOrgs' | 'listMembers' | 'findMembership' | 'listMemberships' | 'listBudgets'>;

/** Invitations to an organisation: by the link's token hash, by id, and the open ones. */
export type InvitationQueries = Pick<Store, 'findInvitationByTokenHash' | 'findInvitation' | 'listPendingInvitations'>;

/** An account's alert thresholds, as the surfaces show them. */
export type AlertQueries = Pick<Store, 'findAlertSettings'>;

/** The operator's audit log and admin keys, read. */
export type AuditQueries = Pick<Store, 'listAudit' | 'listAdminKeys'>;

/** The change feed (cluster/change-feed.ts), and readiness: what changed since an id, and the pruning of old changes. */
export type ChangeFeedSource = Pick<Store, 'latestChangeId' | 'changesAfter' | 'pruneChanges'>;

/** Everything the HTTP surfaces read (AppServices.store); read-only, writes go through commands. */
export type StoreQueries = AccountQueries &
  CredentialQueries &
  OidcIdentityQueries &
  KeyQueries &
  LedgerQueries &
  UsageQueries &
  CodeQueries &
  PaymentQueries &
  AuditQueries &
  WebhookQueries &
  OrgQueries &
  InvitationQueries &
  AlertQueries &
  Pick<ChangeFeedSource, 'latestChangeId'>;

/** The admin API's caller check: an admin key (whose last use it stamps) or an operator's session. */
export type AdminCallerLookup = Pick<Store, 'findAdminKeyByHash' | 'touchAdminKey' | 'findKeyByHash' | 'findAccount'>;

/** Web sessions (web-session/sessions.ts): their own state, read and written. */
export type SessionStore = Pick<Store, 'createSession' | 'findSession' | 'touchSession' | 'deleteSession' | 'deleteOtherSessions' | 'deleteExpiredSessions' | 'setSessionOrg'>;

/** The in-process usage writer (billing/usage-writer.ts) and the metrics of SQLite's write thread. */
export type UsageSink = Pick<Store, 'recordUsage' | 'prepareUsageWrites' | 'usageThreadCpuSeconds'>;

/** The refused half of the request log (http/refusal-log.ts): written in batches, pruned past retention. */
export type RefusalSink = Pick<Store, 'recordRefusals' | 'pruneRefusals'>;

/** The admissions' credit counters: an account's stored balance (with its version, shared mode) and a spend limit's scope's spending in a window. */
export type CreditSource = Pick<Store, 'balanceOf' | 'versionedBalanceOf' | 'spendOf'>;

/** Keys' "last used" stamps (auth/last-used.ts), written in batches off the request path. */
export type KeyStampSink = Pick<Store, 'touchKeys'>;

/**
 * A store that runs `fn` in one transaction and hands it only the role `Tx`. The Store is
 * one: its transaction hands a whole Store, which every role accepts.
 */
export interface Transactional<Tx> {
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
}

/** Shared mode's usage stream writer: a batch of usage with its accounts' balances, in one transaction. */
export type UsageStreamSink = Transactional<Pick<Store, 'recordUsage' | 'versionedBalanceOf'>>;

/** A Stripe event applied inside the payment command's unit of work (payments/stripe-events.ts). */
export type PaymentEventTx = Pick<
  Store,
  | 'recordStripeEvent'
  | 'lockAccount'
  | 'findAccount'
  | 'findStripeCustomerById'
  | 'saveStripeCustomer'
  | 'findPayment'
  | 'createPayment'
  | 'updatePayment'
  | 'findAutoRecharge'
  | 'rearmAutoRecharge'
  | 'disableAutoRecharge'
  | 'balanceOf'
  | 'appendLedgerEntry'
  | 'applySubscriptionState'
  | 'setAccountStatus'
  | 'addWebhookEvent'
>;

/** Auto-recharge: reads settings and the customer, and records the pending payment of a charge it made. */
export type AutoRechargeStore = Pick<Store, 'findAutoRecharge' | 'findStripeCustomer'> & Transactional<Pick<Store, 'findPayment' | 'createPayment'>>;
