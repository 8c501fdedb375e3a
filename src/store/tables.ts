// Row types of the SQL tables, as Kysely sees them (snake_case, as stored), and the list of
// the tables themselves.
import type { Generated } from 'kysely';
import type { WebhookTables } from './webhook-tables.js';
import type { OidcIdentityTables } from './oidc-identity-tables.js';
import type { AlertTables } from './alert-tables.js';
import type { UsageRollupTables, UsageSumColumns } from './usage-rollup-tables.js';
import type { InvitationTables } from './invitation-tables.js';

export interface AccountsTable {
  id: string;
  email: string;
  name: string | null;
  status: string; // 'active' | 'suspended'
  tier: string;
  subscription_status: string; // 'active' | 'past_due' | 'canceled' | 'inactive'
  subscription_period_end: string | null;
  created_at: string; // ISO 8601, UTC
  updated_at: string;
  /** The sum of the account's ledger entries, moved in the same transaction as each entry. */
  balance_micros: number;
  /** Raised by every write of balance_micros (migration 0004). */
  balance_version: number;
  /** past_due keeps a paid tier until then (migration 0005). */
  subscription_grace_until: string | null;
  subscription_cancel_at_period_end: number; // 0 | 1
  role: string; // 'customer' | 'operator' (migration 0007)
  price_multiplier_ppm: number; // every price × this / 1,000,000 (migration 0013)
  /** A complimentary plan: the tier it was given on, and its end (migration 0014). */
  comp_tier: string | null;
  comp_until: string | null;
  kind: string; // AccountKind (migration 0015)
  require_sso: number; // 0 | 1: an organisation's members sign in with OpenID Connect only
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  key_hash: string; // hex SHA-256 of the whole secret
  prefix: string;
  last_four: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Null when revoked by its owner or an operator. */
  revoked_reason: 'leaked' | null;
  /** Where a leaked key was found, as its reporter said. */
  leak_url: string | null;
  /** The key's own controls (auth/key-controls.ts), null when unset; lists as JSON arrays. */
  expires_at: string | null;
  allowed_models: string | null;
  allowed_ips: string | null;
  rpm: number | null;
  credit_limit_micros: number | null;
  credit_limit_period: 'total' | 'month' | null;
  /** An organisation's key: the member who made it (kept when they leave); null otherwise. */
  member_id: string | null;
}

/** An append-only feed of changes other instances must see (revocations, suspensions). */
export interface ChangeEventsTable {
  id: Generated<number>;
  kind: string; // 'key' | 'account' | 'balance'
  subject_id: string;
  created_at: string;
}

/** Append-only: rows are inserted, never updated or deleted. */
export interface LedgerEntriesTable {
  id: Generated<number>;
  account_id: string;
  kind: string; // LedgerKind
  amount_micros: number; // positive adds credit, negative takes it
  reason: string | null;
  reference: string | null; // usage record id, redemption code, payment id
  created_at: string;
}

export interface UsageRecordsTable {
  id: string;
  request_id: string;
  account_id: string;
  key_id: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number; // price × usage, even when the charge was cut at the balance
  latency_ms: number;
  // Parts of prompt_tokens (cached, cache writes) and of completion_tokens (reasoning), migration 0013.
  cached_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  reasoning_tokens: number;
  basis: string; // 'reported' | 'counted'
  outcome: string; // UsageOutcome
  shortfall_micros: number; // of cost_micros, not charged: the balance could not cover it
  held_micros: number; // the hold at admission: the worst case reserved for the request
  status: number; // HTTP status the client saw
  streamed: number; // 0 | 1 (portable across SQLite and PostgreSQL, see migration 0002)
  finish_reason: string | null;
  created_at: string;
  member_id: string | null; // the key's member, in an organisation (migration 0015)
}

/** An API request refused before any model, for the customer's request log. */
export interface RefusedRequestsTable {
  id: string;
  request_id: string;
  account_id: string;
  key_id: string;
  model: string | null;
  path: string;
  status: number;
  /** The 403's error.reason, or the error's code. */
  reason: string | null;
  created_at: string;
  member_id: string | null; // the key's member, in an organisation (migration 0015)
}

/**
 * Usage summed per account, UTC day, key, model and status (migration 0020), kept in step
 * with usage_records by the usage write: the charts and reports read these, never the raw
 * rows, and they outlive the raw rows' retention.
 */
export interface UsageDailyTable extends UsageSumColumns {
  account_id: string;
  day: string; // YYYY-MM-DD, UTC (a date on PostgreSQL, read back as this text)
  key_id: string;
  model: string;
  status: number;
  member_id: string | null; // the key's member: a key has one for its whole life
}

/** Refused requests counted per account, UTC day, key and status (migration 0020), beside usage_daily. */
export interface RefusalDailyTable {
  account_id: string;
  day: string;
  key_id: string;
  status: number;
  member_id: string | null;
  requests: number;
}

/** No row: the account has no password (created by the CLI) and cannot sign in. */
export interface AccountPasswordsTable {
  account_id: string;
  password_hash: string; // scrypt$N$r$p$salt$hash (auth/passwords.ts)
  updated_at: string;
}

/** Dashboard sessions; deleting a row revokes it. */
export interface SessionsTable {
  token_hash: string; // hex SHA-256 of the cookie's token
  account_id: string;
  csrf_token: string;
  created_at: string;
  expires_at: string;
  last_seen_at: string;
  auth_method: string; // AuthMethod: 'password' | 'oidc' (migration 0017)
  /** The organisation the session acts for; null: the person's own account. */
  org_id: string | null;
}

/** One-time links for an account's owner (a password reset); only the token's SHA-256 is kept. */
export interface AccountTokensTable {
  token_hash: string; // hex SHA-256 of the token in the link
  account_id: string;
  purpose: string; // NewAccountToken['purpose']
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A sign-up waiting for its owner to open the link mailed to the address. */
export interface PendingSignUpsTable {
  token_hash: string; // hex SHA-256 of the token in the link
  email: string;
  name: string | null;
  password_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export interface RedemptionCodesTable {
  id: string;
  code_hash: string; // hex SHA-256 of the canonical code
  hint: string | null; // its last group, `LMG-…-7K3Q` (null for codes made before hints)
  amount_micros: number;
  expires_at: string | null;
  created_at: string;
  redeemed_by: string | null;
  redeemed_at: string | null;
  disabled_at: string | null; // an operator withdrew it (migration 0007)
}

/** An account's customer at Stripe, and the newest subscription state applied to it. */
export interface StripeCustomersTable {
  account_id: string;
  customer_id: string;
  subscription_id: string | null;
  state_at: number; // Stripe's time, Unix seconds
  created_at: string;
}

export interface AutoRechargesTable {
  account_id: string;
  threshold_micros: number;
  amount_minor: number;
  enabled: number; // 0 | 1
  armed: number; // 0 | 1: may fire at the next crossing
  sequence: number;
  notice: string | null;
  updated_at: string;
}

/** Every Stripe event received; the primary key makes each one count once. */
export interface StripeEventsTable {
  id: string;
  type: string;
  account_id: string | null;
  payload: string; // the event as Stripe sent it (JSON)
  created_at: number; // Stripe's, Unix seconds
  processed_at: string;
}

export interface PaymentsTable {
  id: string;
  account_id: string;
  kind: string; // PaymentKind
  status: string; // PaymentStatus
  currency: string;
  amount_minor: number;
  refunded_minor: number;
  credits_micros: number;
  checkout_session_id: string | null;
  payment_intent_id: string | null;
  invoice_id: string | null;
  receipt_url: string | null;
  invoice_url: string | null;
  created_at: string;
  updated_at: string;
}

/** One row per admin action (CLI, admin API, console), written with the change itself. */
export interface AuditLogTable {
  id: Generated<number>;
  actor_kind: string; // ActorKind
  actor_id: string;
  action: string; // AuditAction
  target_kind: string;
  target_id: string;
  before_json: string | null;
  after_json: string | null;
  created_at: string;
}

/** A person's place in an organisation. */
export interface OrgMembersTable {
  org_id: string;
  account_id: string;
  role: string; // OrgRole
  created_at: string;
}

/** A monthly spending limit in an organisation: a member's, or the organisation's own (member_id ''). */
export interface OrgBudgetsTable {
  org_id: string;
  member_id: string;
  monthly_micros: number;
  updated_at: string;
}

/** Keys of the admin API; only the SHA-256 of the secret is stored. */
export interface AdminKeysTable {
  id: string;
  name: string;
  key_hash: string;
  prefix: string;
  last_four: string;
  scopes: string; // comma-separated AdminScope
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface Database extends WebhookTables, OidcIdentityTables, AlertTables, InvitationTables, UsageRollupTables {
  accounts: AccountsTable;
  account_passwords: AccountPasswordsTable;
  account_tokens: AccountTokensTable;
  pending_sign_ups: PendingSignUpsTable;
  api_keys: ApiKeysTable;
  change_events: ChangeEventsTable;
  ledger_entries: LedgerEntriesTable;
  redemption_codes: RedemptionCodesTable;
  sessions: SessionsTable;
  usage_records: UsageRecordsTable;
  refused_requests: RefusedRequestsTable;
  stripe_customers: StripeCustomersTable;
  auto_recharges: AutoRechargesTable;
  stripe_events: StripeEventsTable;
  payments: PaymentsTable;
  audit_log: AuditLogTable;
  admin_keys: AdminKeysTable;
  org_members: OrgMembersTable;
  org_budgets: OrgBudgetsTable;
  usage_daily: UsageDailyTable;
  refusal_daily: RefusalDailyTable;
}

/**
 * Every table of the store, each after the tables its foreign keys point to: the order a
 * whole-store copy (`lmgate store copy`) writes them in. `satisfies` makes a table added to
 * Database fail to compile until it is placed here, so no copy can skip it.
 */
const TABLES_IN_COPY_ORDER = {
  accounts: true,
  account_passwords: true,
  account_tokens: true,
  pending_sign_ups: true,
  org_members: true,
  org_budgets: true,
  org_invitations: true,
  api_keys: true,
  sessions: true,
  oidc_identities: true,
  redemption_codes: true,
  ledger_entries: true,
  usage_records: true,
  refused_requests: true,
  usage_daily: true,
  refusal_daily: true,
  usage_models_daily: true,
  usage_accounts_monthly: true,
  usage_keys_monthly: true,
  stripe_customers: true,
  auto_recharges: true,
  stripe_events: true,
  payments: true,
  admin_keys: true,
  audit_log: true,
  webhook_endpoints: true,
  webhook_events: true,
  webhook_deliveries: true,
  webhook_attempts: true,
  alert_settings: true,
  budget_alerts: true,
  change_events: true,
} as const satisfies Record<keyof Database, true>;

export type StoreTable = keyof Database;

export const STORE_TABLES = Object.keys(TABLES_IN_COPY_ORDER) as StoreTable[];
