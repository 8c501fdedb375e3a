// Row types of the rollups across accounts (migration 0021), as Kysely sees them; the
// Database of tables.ts takes them in. Each has usage_daily's sums.
import type { UsageDailyTable } from './tables.js';

type Sums = Omit<UsageDailyTable, 'account_id' | 'day' | 'key_id' | 'model' | 'status' | 'member_id'>;

/** Every account's usage per UTC day, model and status. */
export interface UsageModelsDailyTable extends Sums {
  day: string;
  model: string;
  status: number;
}

/** An account's usage per UTC month (`month` is its first day, YYYY-MM-01). */
export interface UsageAccountsMonthlyTable extends Sums {
  month: string;
  account_id: string;
}

/** A key's usage per UTC month. */
export interface UsageKeysMonthlyTable extends Sums {
  month: string;
  key_id: string;
  account_id: string;
}

export interface UsageRollupTables {
  usage_models_daily: UsageModelsDailyTable;
  usage_accounts_monthly: UsageAccountsMonthlyTable;
  usage_keys_monthly: UsageKeysMonthlyTable;
}
