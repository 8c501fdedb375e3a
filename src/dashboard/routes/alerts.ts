// The acting account's alerts: the balance below which it is alerted, and the percentages
// of its budgets that alert (by webhook and mail to its owners and billing members).
// Everyone in the organisation may read them; changing them takes the `budgets` permission.
import { Type } from '@sinclair/typebox';
import { Nullable, type JsonOf, type TypeBoxFastify } from '../../http/typebox.js';
import type { AlertSettings, AlertSettingsUpdate } from '../../store/alert-store.js';
import { MAX_BUDGET_THRESHOLDS } from '../../alerts/thresholds.js';
import { MESSAGES } from '../../validation/input-validator.js';
import { requirePermission, signedIn, type DashboardServices } from '../context.js';
import type * as Json from '../alert-api-types.js';

const AlertSettingsView = Type.Object({
  balanceBelowMicros: Nullable(Type.Integer()),
  balanceAlertArmed: Type.Boolean(),
  budgetThresholds: Type.Array(Type.Integer()),
  defaultThresholds: Type.Boolean(),
});
export type AlertSettingsView = JsonOf<typeof AlertSettingsView, Json.AlertSettingsView>;

const Percent = Type.Integer({ minimum: 1, maximum: 100, [MESSAGES]: { minimum: 'Each threshold is a percentage from 1 to 100.', maximum: 'Each threshold is a percentage from 1 to 100.' } });
const AlertsBody = Type.Object({
  balanceBelowMicros: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }))),
  budgetThresholds: Type.Optional(Type.Union([Type.Array(Percent, { minItems: 1, maxItems: MAX_BUDGET_THRESHOLDS }), Type.Null()])),
});

export function alertRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands } = services;

  dashboard.get('/alerts', { schema: { response: { 200: AlertSettingsView } } }, async (request) => alertsView(await store.findAlertSettings(signedIn(request).account.id)));

  dashboard.put('/alerts', { schema: { body: AlertsBody, response: { 200: AlertSettingsView } } }, async (request) => {
    const { account } = requirePermission(request, 'budgets');
    const update: AlertSettingsUpdate = {};
    if (request.body.balanceBelowMicros !== undefined) update.balanceBelowMicros = request.body.balanceBelowMicros;
    if (request.body.budgetThresholds !== undefined) update.budgetThresholds = request.body.budgetThresholds;
    return alertsView(await commands.alerts.set(account.id, update));
  });
}

function alertsView(settings: AlertSettings): AlertSettingsView {
  return {
    balanceBelowMicros: settings.balanceBelowMicros,
    balanceAlertArmed: settings.balanceArmed,
    budgetThresholds: settings.budgetThresholds,
    defaultThresholds: !settings.customThresholds,
  };
}
