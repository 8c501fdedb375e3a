// An account's alerts (an organisation is an account): the balance below which it is
// alerted, and the percentages of its budgets that alert (alerts/alert-watch.ts sends them).
import { Type } from '@sinclair/typebox';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import type { AlertSettings, AlertSettingsUpdate } from '../../store/alert-store.js';
import { MAX_BUDGET_THRESHOLDS } from '../../alerts/thresholds.js';
import type * as Json from '../api-types.js';
import { callerOf, type AdminServices } from '../context.js';
import { AccountParams, MAX_MICROS, requireAccount } from '../schemas.js';

const AdminAlertSettings = Type.Object({
  account_id: Type.String(),
  balance_below_micros: Nullable(Type.Integer()),
  balance_alert_armed: Type.Boolean(),
  budget_thresholds: Type.Array(Type.Integer()),
  default_thresholds: Type.Boolean(),
});
export type AdminAlertSettings = JsonOf<typeof AdminAlertSettings, Json.AdminAlertSettings>;

const AlertsBody = Type.Object({
  balance_below_micros: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: MAX_MICROS, description: 'alert when the balance falls below this; null: no balance alert' }))),
  budget_thresholds: Type.Optional(
    Type.Union([Type.Array(Type.Integer({ minimum: 1, maximum: 100 }), { minItems: 1, maxItems: MAX_BUDGET_THRESHOLDS }), Type.Null()], { description: 'percentages of each monthly budget; null: the defaults (50, 80, 100)' }),
  ),
});

const tags = ['accounts'];

export function alertRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, commands } = services;

  admin.get('/accounts/:id/alerts', { config: { adminScope: 'read' }, schema: { tags, summary: 'An account’s alert thresholds', params: AccountParams, response: { 200: AdminAlertSettings } } }, async (request) => {
    const account = await requireAccount(store, request.params.id);
    return alertsView(await store.findAlertSettings(account.id));
  });

  admin.put(
    '/accounts/:id/alerts',
    { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Set an account’s alert thresholds', params: AccountParams, body: AlertsBody, response: { 200: AdminAlertSettings } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const update: AlertSettingsUpdate = {};
      if (request.body.balance_below_micros !== undefined) update.balanceBelowMicros = request.body.balance_below_micros;
      if (request.body.budget_thresholds !== undefined) update.budgetThresholds = request.body.budget_thresholds;
      return alertsView(await commands.alerts.set(account.id, update, callerOf(request).actor));
    },
  );
}

function alertsView(settings: AlertSettings): AdminAlertSettings {
  return {
    account_id: settings.accountId,
    balance_below_micros: settings.balanceBelowMicros,
    balance_alert_armed: settings.balanceArmed,
    budget_thresholds: settings.budgetThresholds,
    default_thresholds: !settings.customThresholds,
  };
}
