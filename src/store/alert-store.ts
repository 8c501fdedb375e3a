// Alerts as the Store port holds them (store.ts extends this port): an account's alert
// settings (a balance threshold, the percentages of its budgets that alert) and the
// conditional writes that claim a crossing, so that of several instances checking the
// same account at once exactly one sends each alert.

/** Spending alerts at these shares of a budget unless the organisation chose others. */
export const DEFAULT_BUDGET_THRESHOLDS: readonly number[] = [50, 80, 100];

export interface AlertSettings {
  accountId: string;
  /** An alert when the balance falls below this; null: none. */
  balanceBelowMicros: number | null;
  /** False once a crossing was alerted, until the balance is back at or above the threshold. */
  balanceArmed: boolean;
  /** Percentages of each budget, ascending. */
  budgetThresholds: number[];
  /** False while the account keeps the defaults. */
  customThresholds: boolean;
}

/** What to change; a field left out stays, null clears it (the thresholds: back to the defaults). */
export interface AlertSettingsUpdate {
  balanceBelowMicros?: number | null;
  budgetThresholds?: readonly number[] | null;
}

/** A budget's threshold as last alerted: in which month, at what budget. */
export interface BudgetAlertMark {
  /** null: the organisation's own budget. */
  memberId: string | null;
  thresholdPercent: number;
  /** YYYY-MM, UTC. */
  period: string;
  budgetMicros: number;
}

export interface AlertStore {
  /** The account's settings; the defaults (no balance alert, 50/80/100) when it has none. */
  findAlertSettings(accountId: string): Promise<AlertSettings>;
  /** Saves the settings; a balance threshold given (re)arms the balance alert. */
  setAlertSettings(accountId: string, update: AlertSettingsUpdate): Promise<AlertSettings>;
  listBudgetAlerts(accountId: string): Promise<BudgetAlertMark[]>;
  /**
   * Disarms the balance alert if it is armed and the stored balance is below its threshold;
   * undefined when not (another instance claimed this crossing, or there is none).
   */
  claimBalanceAlert(accountId: string): Promise<{ balanceMicros: number; thresholdMicros: number } | undefined>;
  /**
   * Records the threshold as alerted for `mark`'s month and budget, unless it was already
   * for that month at that budget or more (then false: not this caller's crossing).
   */
  claimBudgetAlert(accountId: string, mark: BudgetAlertMark): Promise<boolean>;
}
