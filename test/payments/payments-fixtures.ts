// What the payment suites share: the config pointing at the fake Stripe, and the books'
// invariants checked after every scenario.
import { expect } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { FAKE_SECRET_KEY, FAKE_WEBHOOK_SECRET, type FakeStripe } from '../helpers/fake-stripe.js';

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

