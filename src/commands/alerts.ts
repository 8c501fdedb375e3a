// Alerts: an account's settings saved (audited for an operator), and a crossing claimed.
// A claim and its webhook event are one transaction: the conditional write decides which
// instance alerts, and the outbox row commits with it, so one claim is one event.
import type { AlertSettings, AlertSettingsUpdate, BudgetAlertMark } from '../store/alert-store.js';
import type { Actor } from '../store/store.js';
import { parseBudgetThresholds } from '../alerts/thresholds.js';
import { recordWebhookEvent, type BalanceLowData, type BudgetThresholdData } from '../webhooks/events.js';
import { audit, CommandSet } from './unit-of-work.js';

export class AlertCommands extends CommandSet {
  /** Throws ValidationError for thresholds it cannot take. */
  async set(accountId: string, update: AlertSettingsUpdate, actor?: Actor): Promise<AlertSettings> {
    const thresholds = update.budgetThresholds ? parseBudgetThresholds(update.budgetThresholds) : update.budgetThresholds;
    return this.commit(async (tx) => {
      const before = await tx.findAlertSettings(accountId);
      const after = await tx.setAlertSettings(accountId, { ...update, ...(thresholds === undefined ? {} : { budgetThresholds: thresholds }) });
      await audit(tx, actor, { action: 'account.set_alerts', target: { kind: 'account', id: accountId }, before: auditState(before), after: auditState(after) });
      return after;
    });
  }

  /** The balance fell below its threshold: its `balance.low` event, if this caller claimed the crossing. */
  async claimBalanceLow(accountId: string, now: Date): Promise<BalanceLowData | undefined> {
    return this.commit(async (tx) => {
      const claimed = await tx.claimBalanceAlert(accountId);
      if (!claimed) return undefined;
      const data: BalanceLowData = { account_id: accountId, balance_micros: claimed.balanceMicros, threshold_micros: claimed.thresholdMicros };
      await recordWebhookEvent(tx, { accountId, type: 'balance.low', data }, now);
      return data;
    });
  }

  /** A budget's threshold was reached in `mark.period`: true (and its `budget.threshold` event) if this caller claimed it. */
  async claimBudgetThreshold(accountId: string, mark: BudgetAlertMark, spentMicros: number, now: Date): Promise<BudgetThresholdData | undefined> {
    return this.commit(async (tx) => {
      if (!(await tx.claimBudgetAlert(accountId, mark))) return undefined;
      const data: BudgetThresholdData = {
        account_id: accountId,
        member_id: mark.memberId,
        period: 'month',
        limit_micros: mark.budgetMicros,
        spent_micros: spentMicros,
        threshold_percent: mark.thresholdPercent,
      };
      await recordWebhookEvent(tx, { accountId, type: 'budget.threshold', data }, now);
      return data;
    });
  }
}

function auditState(settings: AlertSettings): { balance_below_micros: number | null; budget_thresholds: string } {
  return { balance_below_micros: settings.balanceBelowMicros, budget_thresholds: settings.budgetThresholds.join(',') };
}
