// The admin API's replies (/api/admin/v1) as JSON types: snake_case as the CLI's --json
// prints them, money in integer micro-credits (*_micros), times as ISO 8601 UTC strings.
// The operator console imports these (`import type`), and each route's response schema is
// checked to send exactly its type (JsonOf in http/typebox.ts). No imports: the web's typecheck
// reads this file and nothing of the server behind it.

export interface AdminAccount {
  id: string;
  email: string;
  name: string | null;
  /** active | suspended */
  status: string;
  tier: string;
  /** The tier its requests are served as: its own, or the default tier when the config no longer has its own. */
  served_tier: string;
  /** customer | operator */
  role: string;
  subscription_status: string;
  /** Every price × this / 1,000,000 for the account, beside its tier's multiplier. */
  price_multiplier_ppm: number;
  /** Whether it may call the API, and why not (billing/tiers.ts standingOf): ok | complimentary | past_due | suspended | subscription_required | subscription_lapsed. */
  standing: string;
  /** A complimentary plan's end (null: none, or no comp). */
  comp_until: string | null;
  created_at: string;
  balance_micros: number;
}

export interface AccountPage {
  accounts: AdminAccount[];
  total: number;
  limit: number;
  offset: number;
}

export interface OneAccount {
  account: AdminAccount;
}

export interface TierChange {
  account: AdminAccount;
  /** Set when the new tier needs a subscription the account lacks: every API call will be refused. */
  warning: string | null;
}

export interface AccountDetail {
  account: AdminAccount;
  /** Held by requests in progress on this instance, or on every instance in shared mode. */
  reserved_micros: number;
  available_micros: number;
}

export interface PasswordSet {
  /** Shown once, when one was generated. */
  generated_password: string | null;
}

export interface AdminKey {
  id: string;
  account_id: string;
  name: string;
  /** prefix…last four */
  key: string;
  /** active | revoked */
  status: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** The key's own limits within its account's; each null when unset. */
  controls: AdminKeyControls;
}

export interface AdminKeyControls {
  expires_at: string | null;
  /** Glob patterns. */
  allowed_models: string[] | null;
  /** CIDR ranges. */
  allowed_ips: string[] | null;
  rpm: number | null;
  credit_limit_micros: number | null;
  credit_limit_period: 'total' | 'month' | null;
}

export interface KeyList {
  keys: AdminKey[];
}

export interface CreatedKey {
  key: AdminKey;
  /** Shown once. */
  secret: string;
}

export interface OneKey {
  key: AdminKey;
}

/** One request of an account: answered by a model, or refused before any. */
export interface AdminRequestLogEntry {
  id: string;
  request_id: string;
  at: string;
  key_id: string;
  key_name: string;
  model: string | null;
  status: number;
  /** A refusal's reason: a 403's reason, or the error's code; a 422's names its fields (validation_failed:messages). */
  reason: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  streamed: boolean;
  /** Refused before any model. */
  refused: boolean;
}

export interface AdminRequestLog {
  /** request_log.retention_days: refusals older than this are gone. */
  retention_days: number;
  requests: AdminRequestLogEntry[];
  /** The next page's before; null on the last. */
  next: string | null;
}

export interface AdminLedgerEntry {
  id: number;
  kind: string;
  amount_micros: number;
  reason: string | null;
  reference: string | null;
  created_at: string;
}

/** A grant or an adjustment: its ledger entry and the balance after it. */
export interface CreditsChanged {
  entry: AdminLedgerEntry;
  balance_micros: number;
}

export interface Ledger {
  balance_micros: number;
  entries: AdminLedgerEntry[];
  /** The next page's before_id; null on the last. */
  next_before_id: number | null;
}

export interface AdminCode {
  id: string;
  hint: string | null;
  amount_micros: number;
  expires_at: string | null;
  created_at: string;
  redeemed_by: string | null;
  redeemed_at: string | null;
  disabled_at: string | null;
}

export interface CodeList {
  codes: AdminCode[];
}

export interface CreatedCode extends AdminCode {
  /** Shown once: only its hash is stored. */
  code: string;
}

export interface CreatedCodes {
  codes: CreatedCode[];
}

export interface OneCode {
  code: AdminCode;
}

export type AuditValue = string | number | boolean | null | string[];

export interface AdminAuditEntry {
  id: number;
  /** kind: cli | admin_key | operator; name: an operator's email or an admin key's name, null when unknown. */
  actor: { kind: string; id: string; name: string | null };
  action: string;
  /** kind: account | key | code | admin_key; name: an account's email, a key's name, null when unknown. */
  target: { kind: string; id: string; name: string | null };
  before: Record<string, AuditValue> | null;
  after: Record<string, AuditValue> | null;
  created_at: string;
}

export interface AuditPage {
  entries: AdminAuditEntry[];
  /** The next page's before_id; null on the last. */
  next_before_id: number | null;
}

export interface UsageTotals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  /** Of prompt_tokens: read from a prompt cache. */
  cached_tokens: number;
  /** Of prompt_tokens: written to a prompt cache (5-minute and 1-hour). */
  cache_write_tokens: number;
  /** Of completion_tokens. */
  reasoning_tokens: number;
  /** Billed on lmgate's count: the upstream reported no usage. */
  counted_requests: number;
  /** Of cost_micros, what accounts that ran out could not pay. */
  unpaid_micros: number;
}

export interface UsageReportDay extends UsageTotals {
  date: string;
  /** Paid: top-ups and subscription credits. */
  credits_sold_micros: number;
  /** From redemption codes (free, not sold). */
  credits_redeemed_micros: number;
  credits_granted_micros: number;
}

export interface UsageByModel extends UsageTotals {
  model: string;
}

export interface UsageByAccount extends UsageTotals {
  account_id: string;
  email: string;
}

export interface UsageByKey extends UsageTotals {
  key_id: string;
  key_name: string;
  account_id: string;
}

export interface UsageByStatus {
  status: number;
  /** Refusals included. */
  requests: number;
  /** Of requests, refused before any model. */
  refused: number;
}

export interface UsageReport {
  from: string;
  to: string;
  /** Every day of the period, zeros included. */
  days: UsageReportDay[];
  by_model: UsageByModel[];
  by_account: UsageByAccount[];
  by_key: UsageByKey[];
  by_status: UsageByStatus[];
}

export interface Deployment {
  model: string;
  deployment: string;
  upstream: string;
  /** closed | open | half_open, or - before the first request */
  state: string;
  in_flight: number;
  ok: number;
  rejected: number;
  failed: number;
  aborted: number;
  mean_first_byte_ms: number | null;
}

export interface Upstreams {
  deployments: Deployment[];
}

export interface CatalogTier {
  name: string;
  rpm: number;
  tpm: number;
  concurrency: number;
  models: string[];
  subscription: boolean;
  price_month: number;
  credits_month_micros: number;
  /** Every price × this / 1,000,000 for the tier. */
  price_multiplier_ppm: number;
}

export interface CatalogModel {
  id: string;
  owned_by: string;
  context: number;
  max_output: number;
  input_per_mtok_micros: number;
  cached_input_per_mtok_micros: number;
  cache_write_per_mtok_micros: number;
  cache_write_1h_per_mtok_micros: number;
  output_per_mtok_micros: number;
  reasoning_per_mtok_micros: number;
  /** Which of chat, responses, completions and embeddings it serves. */
  endpoints: string[];
  tiers: string[];
}

export interface Catalog {
  default_tier: string;
  /** Of price_month: payments.stripe.currency, or usd without payments. */
  currency: string;
  tiers: CatalogTier[];
  models: CatalogModel[];
}

/** GET /me: who is calling, with which scopes. */
export interface Me {
  actor: { kind: string; id: string };
  scopes: string[];
}

export interface AdminOrg {
  id: string;
  name: string;
  tier: string;
  status: string;
  /** Members act for it only when signed in with OpenID Connect. */
  require_sso: boolean;
  balance_micros: number;
  members: number;
  created_at: string;
}

export interface AdminOrgMember {
  account_id: string;
  email: string;
  name: string | null;
  role: 'owner' | 'admin' | 'billing' | 'member';
  joined_at: string;
}

export interface AdminOrgBudget {
  /** null: the whole organisation. */
  member_id: string | null;
  monthly_micros: number;
}

export interface OrgList {
  orgs: AdminOrg[];
}

export interface OrgDetail {
  org: AdminOrg;
  members: AdminOrgMember[];
  budgets: AdminOrgBudget[];
}

export interface MemberRemoved {
  revoked_key_ids: string[];
}

/** An account's (an organisation's) alerts: a balance threshold, and the shares of each budget that alert. */
export interface AdminAlertSettings {
  account_id: string;
  /** null: no balance alert. */
  balance_below_micros: number | null;
  /** False once the crossing was alerted, until a top-up lifts the balance back over. */
  balance_alert_armed: boolean;
  /** Percentages of each monthly budget, ascending. */
  budget_thresholds: number[];
  /** True while the account keeps the defaults (50, 80, 100). */
  default_thresholds: boolean;
}
