// The dashboard API's shapes (/api/dashboard/*), as the server sends them: its own JSON
// types (src/dashboard/api-types.ts, which its response schemas are checked against), under
// the names the app uses. `export type` is erased, so no server code reaches the bundle.
import type { PaymentOptions } from '../../src/dashboard/api-types';

export type {
  AccountView as Account,
  AutoRechargeView as AutoRecharge,
  ConfirmationSent,
  CreatedKey,
  DashboardConfig,
  History as BalanceHistory,
  HistoryEntry,
  KeyList,
  KeyView as ApiKey,
  Ledger,
  ModelList,
  OneKey,
  OrgBudget,
  OrgDetail,
  OrgMember,
  OrgPermission,
  OrgRef,
  OrgRole,
  Orgs,
  Overview,
  PaymentList as Payments,
  PaymentOptions,
  PaymentView as Payment,
  PlanChanged,
  PlanView as Plan,
  Plans,
  StandingView as Standing,
  Redeemed as Redemption,
  Redirect,
  RequestLog,
  SessionView as SessionInfo,
  TokenKinds,
  Usage,
  UsageByKey,
  UsageDay,
  UsageOutcome,
  UsageRecord,
  UsageTotals,
} from '../../src/dashboard/api-types';

export type {
  OneWebhookDelivery,
  OneWebhookEndpoint,
  WebhookAttemptView as WebhookAttempt,
  WebhookDeliveryList,
  WebhookDeliveryView as WebhookDelivery,
  WebhookEndpointList,
  WebhookEndpointView as WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookTestSent,
} from '../../src/dashboard/webhook-api-types';

/** What payments are when they are on: the options, none of them null. */
export type EnabledPayments = { [K in Exclude<keyof PaymentOptions, 'enabled'>]: NonNullable<PaymentOptions[K]> };

export type { AlertSettingsView as AlertSettings } from '../../src/dashboard/alert-api-types';
export type { InvitationAccepted, InvitationList, InvitationPreview, InvitationSent, InvitationView as Invitation } from '../../src/dashboard/invitation-api-types';
