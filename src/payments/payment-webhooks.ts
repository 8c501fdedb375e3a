// What a Stripe event's effects tell the account's webhook endpoints: a payment that
// succeeded or failed, a subscription that changed. Recorded in the event's transaction
// (stripe-events.ts), so a replayed or duplicated Stripe event tells nothing twice: its
// effects, and these with them, happen once.
import type { Account, Payment } from '../store/store.js';
import { recordWebhookEvent, type WebhookOutbox } from '../webhooks/events.js';

export async function recordPaymentSucceeded(tx: WebhookOutbox, payment: Payment): Promise<void> {
  await recordWebhookEvent(tx, {
    accountId: payment.accountId,
    type: 'payment.succeeded',
    data: {
      account_id: payment.accountId,
      payment_id: payment.id,
      kind: payment.kind,
      amount_minor: payment.amountMinor,
      currency: payment.currency,
      credits_micros: payment.creditsMicros,
    },
  });
}

export async function recordPaymentFailed(tx: WebhookOutbox, accountId: string, failure: { kind: 'auto_recharge' | 'subscription'; reference: string; reason: string | null }): Promise<void> {
  await recordWebhookEvent(tx, { accountId, type: 'payment.failed', data: { account_id: accountId, ...failure } });
}

export async function recordSubscriptionUpdated(tx: WebhookOutbox, account: Account): Promise<void> {
  await recordWebhookEvent(tx, {
    accountId: account.id,
    type: 'subscription.updated',
    data: {
      account_id: account.id,
      tier: account.tier,
      status: account.subscriptionStatus,
      period_end: account.subscriptionPeriodEnd,
      cancel_at_period_end: account.cancelAtPeriodEnd,
    },
  });
}
