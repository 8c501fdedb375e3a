// Row types of the alert tables (migration 0018), as Kysely sees them; the Database of
// tables.ts takes them in.

export interface AlertSettingsTable {
  account_id: string;
  balance_below_micros: number | null;
  balance_armed: number; // 1: the next crossing sends an alert
  budget_thresholds: string | null; // "50,80,100"; null: the defaults
  updated_at: string;
}

/** The last alert of one threshold of one budget. */
export interface BudgetAlertsTable {
  account_id: string;
  member_id: string; // '' for the organisation's own budget
  threshold_percent: number;
  period: string; // YYYY-MM
  budget_micros: number;
  fired_at: string;
}

export interface AlertTables {
  alert_settings: AlertSettingsTable;
  budget_alerts: BudgetAlertsTable;
}
