// Alert settings and the claims of crossings (alert-store.ts has the port). A claim is one
// conditional write: PostgreSQL makes a second writer of the same row wait for the first
// and then re-checks its condition, and SQLite has one writer, so one crossing is claimed
// once whatever the number of instances.
import { sql, type Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import { DEFAULT_BUDGET_THRESHOLDS, type AlertSettings, type AlertSettingsUpdate, type BudgetAlertMark } from './alert-store.js';
import type { AlertSettingsTable } from './alert-tables.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { now, type Db } from './sql.js';

export async function findAlertSettings(db: Db, accountId: string): Promise<AlertSettings> {
  const row = await db.selectFrom('alert_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  return toSettings(accountId, row);
}

/** In the caller's transaction, with an account change, so every instance reads the settings again. */
export async function setAlertSettings(trx: Db, dialect: Dialect, accountId: string, update: AlertSettingsUpdate): Promise<AlertSettings> {
  const changes: Partial<AlertSettingsTable> = { updated_at: now() };
  if (update.balanceBelowMicros !== undefined) {
    changes.balance_below_micros = update.balanceBelowMicros === null ? null : checkMicros(update.balanceBelowMicros);
    changes.balance_armed = 1;
  }
  if (update.budgetThresholds !== undefined) changes.budget_thresholds = update.budgetThresholds === null ? null : update.budgetThresholds.join(',');
  await trx
    .insertInto('alert_settings')
    .values({ account_id: accountId, balance_below_micros: null, balance_armed: 1, budget_thresholds: null, updated_at: now(), ...changes })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(changes))
    .execute();
  await recordChange(trx, dialect, 'account', accountId);
  return findAlertSettings(trx, accountId);
}

export async function listBudgetAlerts(db: Db, accountId: string): Promise<BudgetAlertMark[]> {
  const rows = await db.selectFrom('budget_alerts').selectAll().where('account_id', '=', accountId).execute();
  return rows.map((row) => ({
    memberId: row.member_id === '' ? null : row.member_id,
    thresholdPercent: Number(row.threshold_percent),
    period: row.period,
    budgetMicros: checkMicros(Number(row.budget_micros)),
  }));
}

export async function claimBalanceAlert(db: Db, accountId: string): Promise<{ balanceMicros: number; thresholdMicros: number } | undefined> {
  const claimed = await db
    .updateTable('alert_settings')
    .set({ balance_armed: 0 })
    .where('account_id', '=', accountId)
    .where('balance_armed', '=', 1)
    .where('balance_below_micros', 'is not', null)
    .where('balance_below_micros', '>', (eb) => eb.selectFrom('accounts').select('balance_micros').where('id', '=', accountId))
    .returning('balance_below_micros')
    .executeTakeFirst();
  if (!claimed) return undefined;
  const account = await db.selectFrom('accounts').select('balance_micros').where('id', '=', accountId).executeTakeFirstOrThrow();
  return { balanceMicros: checkMicros(Number(account.balance_micros)), thresholdMicros: checkMicros(Number(claimed.balance_below_micros)) };
}

/**
 * In the transaction that moved the balance up (ledger.ts): a balance back at or above its
 * threshold arms the alert for the next crossing.
 */
export async function rearmBalanceAlert(trx: Db, accountId: string, balanceMicros: number): Promise<void> {
  await trx
    .updateTable('alert_settings')
    .set({ balance_armed: 1 })
    .where('account_id', '=', accountId)
    .where('balance_armed', '=', 0)
    .where('balance_below_micros', '<=', balanceMicros)
    .execute();
}

export async function claimBudgetAlert(db: Db, accountId: string, mark: BudgetAlertMark): Promise<boolean> {
  const claimed = await db
    .insertInto('budget_alerts')
    .values({
      account_id: accountId,
      member_id: mark.memberId ?? '',
      threshold_percent: mark.thresholdPercent,
      period: mark.period,
      budget_micros: checkMicros(mark.budgetMicros),
      fired_at: now(),
    })
    .onConflict((oc) =>
      oc
        .columns(['account_id', 'member_id', 'threshold_percent'])
        .doUpdateSet({ period: sql`excluded.period`, budget_micros: sql`excluded.budget_micros`, fired_at: sql`excluded.fired_at` })
        // A later month re-arms every threshold; so does a larger budget within the month.
        .where((eb) =>
          eb.or([
            eb('budget_alerts.period', '<', sql<string>`excluded.period`),
            eb.and([eb('budget_alerts.period', '=', sql<string>`excluded.period`), eb('budget_alerts.budget_micros', '<', sql<number>`excluded.budget_micros`)]),
          ]),
        ),
    )
    .returning('threshold_percent')
    .executeTakeFirst();
  return claimed !== undefined;
}

function toSettings(accountId: string, row: Selectable<AlertSettingsTable> | undefined): AlertSettings {
  const custom = row?.budget_thresholds ?? null;
  return {
    accountId,
    balanceBelowMicros: row?.balance_below_micros === null || row === undefined ? null : checkMicros(Number(row.balance_below_micros)),
    balanceArmed: (row?.balance_armed ?? 1) === 1,
    budgetThresholds: custom === null ? [...DEFAULT_BUDGET_THRESHOLDS] : custom.split(',').filter((part) => part !== '').map(Number),
    customThresholds: custom !== null,
  };
}
