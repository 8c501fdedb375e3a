// What the payment suites share: the config pointing at the fake Stripe, the books'
// invariants checked after every scenario, and signed bodies that are not events lmgate
// can apply.
import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { FAKE_SECRET_KEY, FAKE_WEBHOOK_SECRET, id, type FakeStripe } from '../helpers/fake-stripe.js';

process.env.LMGATE_TEST_STRIPE_KEY = FAKE_SECRET_KEY;
process.env.LMGATE_TEST_STRIPE_WHSEC = FAKE_WEBHOOK_SECRET;

/** Sign-ups start with no trial credits here, so each balance is what payments added. */
export const EMPTY_SIGN_UPS = { per_address_per_hour: 10_000, credits: 0 };

export function paymentsConfig(fake: FakeStripe): Record<string, unknown> {
  return {
    stripe: {
      secret_key_env: 'LMGATE_TEST_STRIPE_KEY',
      webhook_secret_env: 'LMGATE_TEST_STRIPE_WHSEC',
      api_base: fake.url,
      currency: 'usd',
      credits_per_unit: 2, // $10 buys 20 credits
      top_up: { presets: [10, 25], min: 5, max: 100 },
      prices: { pro: 'price_pro_monthly' },
      grace_days: 3,
    },
  };
}

/** Each balance equals its ledger sum, and every payment names its Stripe object. */
export async function expectBooksBalance(store: Store, accountIds: string[]): Promise<void> {
  for (const accountId of accountIds) {
    expect(await store.balanceOf(accountId)).toBe(await store.sumLedger(accountId));
    for (const payment of await store.listPayments({ accountId })) {
      expect(payment.checkoutSessionId ?? payment.paymentIntentId ?? payment.invoiceId).toMatch(/^(cs|pi|in)_/);
    }
  }
}


/**
 * Bodies a webhook may be signed with that are not events lmgate can apply, made from a
 * completed Checkout Session (`session`) and its `paid` event: not objects, no data, a
 * null object, fields of the wrong type, a session without id, an event without created,
 * a v2 thin event.
 */
export function unappliableBodies(paid: Record<string, unknown>, session: Record<string, unknown>): unknown[] {
  const withObject = (object: unknown): unknown => ({ ...paid, id: id('evt'), data: { object } });
  const { id: _id, ...withoutId } = session;
  const { created: _created, ...withoutCreated } = { ...paid, id: id('evt') } as Record<string, unknown>;
  return [
    {},
    [],
    null,
    'a string',
    42,
    { ...paid, id: id('evt'), data: undefined },
    withObject(null),
    withObject({ ...session, client_reference_id: 42 }),
    withObject({ ...session, metadata: 'top_up' }),
    withObject({ ...session, customer: 7 }),
    withObject(withoutId),
    withoutCreated,
    { id: id('evt'), object: 'v2.core.event', type: 'v1.billing.meter.error_report_triggered', created: new Date().toISOString(), related_object: { id: 'mtr_1' } },
  ];
}
