// What a customer starts from the dashboard: a Checkout Session to add credits or to
// subscribe to a paid tier, and the Billing Portal. Nothing here credits anything: credits
// come only from the webhook, once Stripe says the money arrived.
import type Stripe from 'stripe';
import type { StripeConfig } from '../config/schema.js';
import { PaymentProviderError, Refusal, ValidationError } from '../errors.js';
import { formatCredits } from '../money.js';
import type { PaymentQueries } from '../store/queries.js';
import type { Account, StripeCustomer } from '../store/store.js';
import type { PaymentCommands } from '../commands/payments.js';
import type { CurrencyRates } from './currency.js';

/** Where Stripe sends the customer back to. */
export interface ReturnUrls {
  successUrl: string;
  cancelUrl: string;
}

export class StripeCheckout {
  constructor(
    private readonly stripe: Stripe,
    private readonly store: Pick<PaymentQueries, 'findStripeCustomer'>,
    private readonly commands: PaymentCommands,
    private readonly config: StripeConfig,
    private readonly rates: CurrencyRates,
  ) {}

  /** Bounds of a top-up, in minor units. */
  get topUpBounds(): { minMinor: number; maxMinor: number; presetsMinor: number[] } {
    const { top_up: topUp } = this.config;
    return { minMinor: this.rates.minorOf(topUp.min), maxMinor: this.rates.minorOf(topUp.max), presetsMinor: topUp.presets.map((p) => this.rates.minorOf(p)) };
  }

  /** A Checkout Session in payment mode; the card is saved for auto-recharge. Returns its URL. */
  async startTopUp(payer: Payer, amountMinor: number, urls: ReturnUrls): Promise<string> {
    const { account } = payer;
    const { minMinor, maxMinor } = this.topUpBounds;
    if (!Number.isSafeInteger(amountMinor) || amountMinor < minMinor || amountMinor > maxMinor) {
      throw new ValidationError({ amountMinor: [`must be a whole number of minor units from ${minMinor} to ${maxMinor}`] });
    }
    const customer = await this.customerOf(payer);
    const creditsMicros = this.rates.creditsMicrosOf(amountMinor);
    const metadata = { account_id: account.id, purpose: 'top_up' };
    const session = await call(() =>
      this.stripe.checkout.sessions.create({
        mode: 'payment',
        customer: customer.customerId,
        client_reference_id: account.id,
        line_items: [{ quantity: 1, price_data: { currency: this.rates.currency, unit_amount: amountMinor, product_data: { name: `${formatCredits(creditsMicros)} credits` } } }],
        payment_intent_data: { setup_future_usage: 'off_session', metadata },
        metadata,
        success_url: urls.successUrl,
        cancel_url: urls.cancelUrl,
      }),
    );
    await this.commands.recordPending({ accountId: account.id, kind: 'top_up', status: 'pending', currency: this.rates.currency, amountMinor, creditsMicros, checkoutSessionId: session.id });
    return urlOf(session.url);
  }

  /** A Checkout Session in subscription mode for a paid tier with a configured price. */
  async startSubscription(payer: Payer, tier: string, urls: ReturnUrls): Promise<string> {
    const { account } = payer;
    const price = this.config.prices[tier];
    if (!price) throw new Refusal('plan_needs_operator');
    const customer = await this.customerOf(payer);
    const session = await call(() =>
      this.stripe.checkout.sessions.create({
        mode: 'subscription',
        customer: customer.customerId,
        client_reference_id: account.id,
        line_items: [{ price, quantity: 1 }],
        subscription_data: { metadata: { account_id: account.id } },
        metadata: { account_id: account.id, purpose: 'subscription' },
        success_url: urls.successUrl,
        cancel_url: urls.cancelUrl,
      }),
    );
    return urlOf(session.url);
  }

  async openPortal(payer: Payer, returnUrl: string): Promise<string> {
    const customer = await this.customerOf(payer);
    const session = await call(() => this.stripe.billingPortal.sessions.create({ customer: customer.customerId, return_url: returnUrl }));
    return session.url;
  }

  /** Stripe's hosted receipt of a card payment: its latest charge's. */
  async receiptOf(paymentIntentId: string): Promise<string | null> {
    const intent = await call(() => this.stripe.paymentIntents.retrieve(paymentIntentId, { expand: ['latest_charge'] }));
    const charge = intent.latest_charge;
    return charge !== null && typeof charge !== 'string' ? charge.receipt_url : null;
  }

  /**
   * The account's Stripe customer, created once (the idempotency key holds against a race).
   * An organisation's is named after it and reached at the address of the member who first
   * pays: it has none of its own.
   */
  private async customerOf({ account, person }: Payer): Promise<StripeCustomer> {
    const known = await this.store.findStripeCustomer(account.id);
    if (known) return known;
    const name = account.kind === 'org' ? (account.name ?? undefined) : undefined;
    const customer = await call(() =>
      this.stripe.customers.create({ email: person.email, name, metadata: { account_id: account.id } }, { idempotencyKey: `lmgate-customer-${account.id}` }),
    );
    return this.commands.saveCustomer(account.id, customer.id);
  }
}

/** Who pays: the account (a person's own, or an organisation), and the person at the dashboard. */
export interface Payer {
  account: Account;
  person: Account;
}

/** A Stripe call; its failure is the payment provider's, with the original kept as cause. */
export async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw new PaymentProviderError(err instanceof Error ? err.message : String(err), { cause: err });
  }
}

function urlOf(url: string | null): string {
  if (!url) throw new PaymentProviderError('Stripe returned a Checkout Session without a URL');
  return url;
}
