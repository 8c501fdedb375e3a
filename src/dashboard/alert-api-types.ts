// The dashboard API's alert replies (/api/dashboard/alerts) as JSON types, beside
// api-types.ts and under its rules: camelCase, null where a value is absent, no imports
// (the web's typecheck reads this file and nothing behind it).

/** The acting account's alerts: a balance threshold, and the shares of each budget that alert. */
export interface AlertSettingsView {
  /** In micro-credits; null: no balance alert. */
  balanceBelowMicros: number | null;
  /** False once the crossing was alerted, until a top-up lifts the balance back over. */
  balanceAlertArmed: boolean;
  /** Percentages of each monthly budget, ascending. */
  budgetThresholds: number[];
  /** True while the account keeps the defaults (50, 80, 100). */
  defaultThresholds: boolean;
}
