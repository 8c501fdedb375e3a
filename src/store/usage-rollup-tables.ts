// Row types of the rollups across accounts (migration 0021), as Kysely sees them; the
// Database of tables.ts takes them in. Each has the sums of usage_daily (which has them too).

/** What every usage rollup row sums. */
export interface UsageSumColumns {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  cache_write_1h_tokens: number;
  reasoning_tokens: number;
  counted_requests: number; // billed on lmgate's count (basis 'counted')
  cost_micros: number;
  shortfall_micros: number;
}

/** Every account's usage per UTC day, model and status. */
export interface UsageModelsDailyTable extends UsageSumColumns {
  day: string;
  model: string;
  status: number;
}

/** An account's usage per UTC month (`month` is its first day, YYYY-MM-01). */
export interface UsageAccountsMonthlyTable extends UsageSumColumns {
  month: string;
  account_id: string;
}

/** A key's usage per UTC month. */
export interface UsageKeysMonthlyTable extends UsageSumColumns {
  month: string;
  key_id: string;
  account_id: string;
}

export interface UsageRollupTables {
  usage_models_daily: UsageModelsDailyTable;
  usage_accounts_monthly: UsageAccountsMonthlyTable;
  usage_keys_monthly: UsageKeysMonthlyTable;
}
