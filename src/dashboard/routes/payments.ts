// Paying through Stripe from the Billing page: add credits, subscribe, manage the
// subscription in Stripe's portal, see payments with their receipts, and set auto-recharge.
// `GET /payments/options` answers `enabled: false` without payments.stripe, so the page
// shows no button that cannot work; every other route then refuses with 404.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { Refusal, ValidationError } from '../../errors.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import type { Payments } from '../../payments/payments.js';
import type { Payment } from '../../store/store.js';
import { requirePermission, type DashboardServices } from '../context.js';
import type * as Json from '../api-types.js';
import type { JsonOf } from '../../http/typebox.js';

const Options = Type.Object({
  enabled: Type.Boolean(),
  currency: Nullable(Type.String()),
  minorPerUnit: Nullable(Type.Integer()),
  /** What one unit of the currency buys, so the page can show what an amount adds. */
  creditsMicrosPerUnit: Nullable(Type.Integer()),
  presetsMinor: Type.Array(Type.Integer()),
  minMinor: Nullable(Type.Integer()),
  maxMinor: Nullable(Type.Integer()),
  subscribable: Type.Array(Type.String()),
});
export type Options = JsonOf<typeof Options, Json.PaymentOptions>;
const TopUpBody = Type.Object({ amountMinor: Type.Integer({ minimum: 1 }) });
const SubscribeBody = Type.Object({ tier: Type.String({ minLength: 1, maxLength: 100 }) });
const Redirect = Type.Object({ url: Type.String() });
export type Redirect = JsonOf<typeof Redirect, Json.Redirect>;
const PaymentView = Type.Object({
  id: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  currency: Type.String(),
  amountMinor: Type.Integer(),
  refundedMinor: Type.Integer(),
  creditsMicros: Type.Integer(),
  /** The return page waits for its own Checkout Session's payment. */
  checkoutSessionId: Nullable(Type.String()),
  receiptUrl: Nullable(Type.String()),
  invoiceUrl: Nullable(Type.String()),
  createdAt: Type.String(),
});
const PaymentList = Type.Object({ payments: Type.Array(PaymentView) });
export type PaymentList = JsonOf<typeof PaymentList, Json.PaymentList>;
const AutoRechargeBody = Type.Object({
  enabled: Type.Boolean(),
  thresholdMicros: Type.Integer({ minimum: 0 }),
  amountMinor: Type.Integer({ minimum: 1 }),
});
const AutoRechargeView = Type.Object({
  enabled: Type.Boolean(),
  thresholdMicros: Type.Integer(),
  amountMinor: Type.Integer(),
  notice: Nullable(Type.String()),
});
export type AutoRechargeView = JsonOf<typeof AutoRechargeView, Json.AutoRechargeView>;

export function paymentRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands } = services;
  const enabled = (): Payments => {
    if (!services.payments) throw new Refusal('payments_disabled');
    return services.payments;
  };

  dashboard.get('/payments/options', { schema: { response: { 200: Options } } }, async () => {
    const payments = services.payments;
    if (!payments) return { enabled: false, currency: null, minorPerUnit: null, creditsMicrosPerUnit: null, presetsMinor: [], minMinor: null, maxMinor: null, subscribable: [] };
    const bounds = payments.checkout.topUpBounds;
    return {
      enabled: true,
      currency: payments.rates.currency,
      minorPerUnit: payments.rates.minorPerUnit,
      creditsMicrosPerUnit: payments.rates.creditsMicrosOf(payments.rates.minorPerUnit),
      presetsMinor: bounds.presetsMinor,
      minMinor: bounds.minMinor,
      maxMinor: bounds.maxMinor,
      subscribable: Object.keys(services.config.payments.stripe?.prices ?? {}),
    };
  });

  dashboard.post('/payments/top-up', { schema: { body: TopUpBody, response: { 200: Redirect } } }, async (request) => {
    return { url: await enabled().checkout.startTopUp(requirePermission(request, 'billing'), request.body.amountMinor, returnUrls(request, 'top-up')) };
  });

  dashboard.post('/payments/subscribe', { schema: { body: SubscribeBody, response: { 200: Redirect } } }, async (request) => {
    const payer = requirePermission(request, 'billing');
    const { tier } = request.body;
    if (!(tier in services.config.tiers)) throw new Refusal('unknown_plan');
    return { url: await enabled().checkout.startSubscription(payer, tier, returnUrls(request, 'subscribe')) };
  });

  dashboard.post('/payments/portal', { schema: { response: { 200: Redirect } } }, async (request) => {
    return { url: await enabled().checkout.openPortal(requirePermission(request, 'billing'), `${originOf(request)}/billing/plans`) };
  });

  dashboard.get('/payments', { schema: { response: { 200: PaymentList } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    enabled();
    return { payments: (await store.listPayments({ accountId: account.id, limit: 100 })).map(paymentView) };
  });

  // Stripe does not order its events: a charge (with its receipt) may come before the
  // payment it belongs to is recorded. Such a receipt is asked of Stripe when first opened.
  dashboard.get('/payments/:id/receipt', { schema: { params: Type.Object({ id: Type.String({ maxLength: 100 }) }) } }, async (request, reply) => {
    const { account } = requirePermission(request, 'billing');
    const payments = enabled();
    const payment = await store.findPayment({ id: request.params.id });
    if (!payment || payment.accountId !== account.id || !payment.paymentIntentId) throw new Refusal('receipt_not_found');
    let url = payment.receiptUrl;
    if (url === null) {
      url = await payments.checkout.receiptOf(payment.paymentIntentId);
      if (url === null) throw new Refusal('receipt_not_found');
      await commands.payments.saveReceipt(payment.id, url);
    }
    return reply.redirect(url);
  });

  dashboard.get('/payments/auto-recharge', { schema: { response: { 200: AutoRechargeView } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    enabled();
    const settings = await store.findAutoRecharge(account.id);
    return settings
      ? { enabled: settings.enabled, thresholdMicros: settings.thresholdMicros, amountMinor: settings.amountMinor, notice: settings.notice }
      : { enabled: false, thresholdMicros: 0, amountMinor: enabled().checkout.topUpBounds.minMinor, notice: null };
  });

  dashboard.put('/payments/auto-recharge', { schema: { body: AutoRechargeBody, response: { 200: AutoRechargeView } } }, async (request) => {
    const { account } = requirePermission(request, 'billing');
    const { minMinor, maxMinor } = enabled().checkout.topUpBounds;
    const { amountMinor } = request.body;
    if (amountMinor < minMinor || amountMinor > maxMinor) throw new ValidationError({ amountMinor: [`must be from ${minMinor} to ${maxMinor}`] });
    const settings = await commands.payments.setAutoRecharge(account.id, request.body);
    enabled().autoRecharge.forget(account.id);
    return { enabled: settings.enabled, thresholdMicros: settings.thresholdMicros, amountMinor: settings.amountMinor, notice: settings.notice };
  });
}

function paymentView(payment: Payment) {
  return {
    id: payment.id,
    kind: payment.kind,
    status: payment.status,
    currency: payment.currency,
    amountMinor: payment.amountMinor,
    refundedMinor: payment.refundedMinor,
    creditsMicros: payment.creditsMicros,
    checkoutSessionId: payment.checkoutSessionId,
    receiptUrl: payment.receiptUrl ?? (payment.paymentIntentId && payment.kind !== 'subscription' ? `/api/dashboard/payments/${payment.id}/receipt` : null),
    invoiceUrl: payment.invoiceUrl,
    createdAt: payment.createdAt,
  };
}

function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** The Billing page shows the outcome; Stripe fills in the session id. */
function returnUrls(request: FastifyRequest, flow: 'top-up' | 'subscribe'): { successUrl: string; cancelUrl: string } {
  const base = `${originOf(request)}/billing/plans?flow=${flow}`;
  return { successUrl: `${base}&checkout=success&session_id={CHECKOUT_SESSION_ID}`, cancelUrl: `${base}&checkout=canceled` };
}
