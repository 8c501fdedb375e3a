// The console's side of the admin API (/api/admin/v1): paths, and the shapes it answers
// with (snake_case, money in integer micro-credits, as the API documents them).

export const ADMIN_API = '/api/admin/v1';

export function adminPath(path: string): string {
  return `${ADMIN_API}${path}`;
}

export interface AdminAccount {
  id: string;
  email: string;
  name: string | null;
  status: string;
  tier: string;
  /** The tier its requests are served as: its own, or the default tier when the config no longer has its own. */
  served_tier: string;
  role: string;
  subscription_status: string;
  /** Every price × this / 1,000,000 for the account. */
  price_multiplier_ppm: number;
  created_at: string;
  balance_micros: number;
}

export interface AccountPage {
  accounts: AdminAccount[];
  total: number;
  limit: number;
  offset: number;
}

export interface AccountDetail {
  account: AdminAccount;
  reserved_micros: number;
  available_micros: number;
}

export interface AdminKey {
  id: string;
  account_id: string;
  name: string;
  key: string;
  status: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface LedgerEntry {
  id: number;
  kind: string;
  amount_micros: number;
  reason: string | null;
  reference: string | null;
  created_at: string;
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

type AuditValue = string | number | boolean | null | string[];

export interface AuditEntry {
  id: number;
  actor: { kind: string; id: string };
  action: string;
  target: { kind: string; id: string };
  before: Record<string, AuditValue> | null;
  after: Record<string, AuditValue> | null;
  created_at: string;
}

export interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
}

export interface UsageReport {
  from: string;
  to: string;
  days: (Totals & { date: string; credits_sold_micros: number; credits_granted_micros: number })[];
  by_model: (Totals & { model: string })[];
  by_account: (Totals & { account_id: string; email: string })[];
  by_key: (Totals & { key_id: string; key_name: string; account_id: string })[];
  by_status: { status: number; requests: number }[];
}

export interface Deployment {
  model: string;
  deployment: string;
  upstream: string;
  state: string;
  in_flight: number;
  ok: number;
  rejected: number;
  failed: number;
  aborted: number;
  mean_first_byte_ms: number | null;
}

export interface Catalog {
  default_tier: string;
  currency: string;
  tiers: {
    name: string;
    rpm: number;
    tpm: number;
    concurrency: number;
    models: string[];
    subscription: boolean;
    price_month: number;
    credits_month_micros: number;
    price_multiplier_ppm: number;
  }[];
  models: {
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
    endpoints: string[];
    tiers: string[];
  }[];
}
