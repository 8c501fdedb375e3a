// Row types of the SQL tables, as Kysely sees them (snake_case, as stored).
import type { Generated } from 'kysely';

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
}

/** An append-only feed of changes other instances must see (revocations, suspensions). */
export interface ChangeEventsTable {
  id: Generated<number>;
  kind: string; // 'key' | 'account'
  subject_id: string;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  change_events: ChangeEventsTable;
}
