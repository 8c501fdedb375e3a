// The part of KyselyStore (kysely-store.ts) for alerts (alerts.ts): settings, and the
// conditional writes that claim a crossing.
import type { AlertSettings, AlertSettingsUpdate, AlertStore, BudgetAlertMark } from './alert-store.js';
import * as alerts from './alerts.js';
import { KyselyOrgStore } from './kysely-org-store.js';

export abstract class KyselyAlertStore extends KyselyOrgStore implements AlertStore {
  findAlertSettings(accountId: string): Promise<AlertSettings> {
    return alerts.findAlertSettings(this.db, accountId);
  }

  setAlertSettings(accountId: string, update: AlertSettingsUpdate): Promise<AlertSettings> {
    return this.write((trx) => alerts.setAlertSettings(trx, this.sqlDialect, accountId, update));
  }

  listBudgetAlerts(accountId: string): Promise<BudgetAlertMark[]> {
    return alerts.listBudgetAlerts(this.db, accountId);
  }

  claimBalanceAlert(accountId: string): Promise<{ balanceMicros: number; thresholdMicros: number } | undefined> {
    return this.write((trx) => alerts.claimBalanceAlert(trx, accountId));
  }

  claimBudgetAlert(accountId: string, mark: BudgetAlertMark): Promise<boolean> {
    return alerts.claimBudgetAlert(this.db, accountId, mark);
  }
}
