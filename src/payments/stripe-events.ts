// What each Stripe event does to lmgate's books. Every event is recorded and applied in one
// store transaction through the commands, so it counts once however often, and on however
// many instances, Stripe delivers it; and each effect is itself idempotent (payments change
// status at most once, refunds move by what is new), so replaying a stored event is safe.
import type Stripe from 'stripe';
import { creditsToMicros } from '../money.js';
import type { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import type { PaymentEventTx } from '../store/queries.js';
import type { Account, Payment, PaymentChanges, PaymentRef, SubscriptionState } from '../store/store.js';
import { CurrencyRates } from './currency.js';
import { recordPaymentFailed, recordPaymentSucceeded, recordSubscriptionUpdated } from './payment-webhooks.js';

export type EventOutcome = 'applied' | 'duplicate';

const DAY_SEC = 24 * 60 * 60;

/** What applying one event needs to know. */
interface Applying {
  tx: PaymentEventTx;
  account: Account;
  event: Stripe.Event;
}

export class StripeEvents {
  private readonly rates: CurrencyRates;
  private readonly tierOfPrice: Map<string, string>;

  constructor(
    private readonly config: Config,
    private readonly commands: Commands,
  ) {
    const stripe = config.payments.stripe!;
    this.rates = new CurrencyRates(stripe);
    this.tierOfPrice = new Map(Object.entries(stripe.prices).map(([tier, price]) => [price, tier]));
  }

  /** A verified event as delivered: applied once, or recognised as seen before. */
  receive(event: Stripe.Event): Promise<EventOutcome> {
    return this.commands.payments.apply(async (tx) => {
      const account = await this.lockedAccountOf(tx, event);
      const isNew = await tx.recordStripeEvent({
        id: event.id,
        type: event.type,
        accountId: account?.id ?? null,
        payload: JSON.stringify(event),
        createdAt: event.created,
        processedAt: new Date().toISOString(),
      });
      if (!isNew) return 'duplicate';
      if (account) await this.apply({ tx, account, event });
      return 'applied';
    });
  }

  /** Applies a stored event again (the operator's `payments replay`); its effects are idempotent. */
  replay(record: { payload: string }): Promise<void> {
    const event = JSON.parse(record.payload) as Stripe.Event;
    return this.commands.payments.apply(async (tx) => {
      const account = await this.lockedAccountOf(tx, event);
      if (account) await this.apply({ tx, account, event });
    });
  }

  private async apply(a: Applying): Promise<void> {
    const { event } = a;
    switch (event.type) {
      case 'checkout.session.completed':
        await this.checkoutCompleted(a, event.data.object);
        break;
      case 'payment_intent.succeeded':
        await this.autoRechargeSucceeded(a, event.data.object);
        break;
      case 'payment_intent.payment_failed':
        if (event.data.object.metadata?.purpose === 'auto_recharge') {
          await a.tx.disableAutoRecharge(a.account.id, 'The automatic top-up payment failed; auto-recharge is off until you turn it on again.');
          const reason = event.data.object.last_payment_error?.message ?? null;
          await recordPaymentFailed(a.tx, a.account.id, { kind: 'auto_recharge', reference: event.data.object.id, reason });
        }
        break;
      case 'charge.succeeded':
        await this.chargeSucceeded(a, event.data.object);
        break;
      case 'invoice.paid':
        await this.invoicePaid(a, event.data.object);
        break;
      case 'invoice.payment_failed':
        await this.setSubscription(a, { ...this.current(a.account), status: 'past_due', graceUntil: this.graceUntil(a.account, event.created) });
        await recordPaymentFailed(a.tx, a.account.id, { kind: 'subscription', reference: event.data.object.id, reason: null });
        break;
      case 'customer.subscription.updated':
        await this.subscriptionUpdated(a, event.data.object);
        break;
      case 'customer.subscription.deleted':
        await this.setSubscription(a, { ...this.lapsed(), subscriptionId: null });
        break;
      case 'charge.refunded':
        await this.chargeRefunded(a, event.data.object);
        break;
      case 'charge.dispute.created':
        await this.disputeCreated(a, event.data.object);
        break;
      default:
        break;
    }
  }

  private async checkoutCompleted(a: Applying, session: Stripe.Checkout.Session): Promise<void> {
    const customerId = idOf(session.customer);
    if (customerId) await a.tx.saveStripeCustomer(a.account.id, customerId);
    if (session.mode !== 'payment' || session.payment_status !== 'paid' || session.metadata?.purpose !== 'top_up') return;
    const paymentIntentId = idOf(session.payment_intent);
    const amountMinor = session.amount_total ?? 0;
    const payment = await this.settle(
      a,
      { checkoutSessionId: session.id },
      () => a.tx.createPayment({ ...this.paymentOf(a.account, 'top_up', amountMinor, session.currency ?? ''), checkoutSessionId: session.id, paymentIntentId }),
      { paymentIntentId },
    );
    if (payment) {
      await this.credit(a, { kind: 'top_up', amountMicros: payment.creditsMicros, reference: session.id, reason: `Stripe top-up, payment ${paymentIntentId ?? 'without intent'}` });
      await recordPaymentSucceeded(a.tx, payment);
    }
  }

  private async autoRechargeSucceeded(a: Applying, intent: Stripe.PaymentIntent): Promise<void> {
    if (intent.metadata?.purpose !== 'auto_recharge') return;
    const payment = await this.settle(a, { paymentIntentId: intent.id }, () =>
      a.tx.createPayment({ ...this.paymentOf(a.account, 'auto_recharge', intent.amount_received, intent.currency), paymentIntentId: intent.id }),
    );
    if (!payment) return;
    await this.credit(a, { kind: 'top_up', amountMicros: payment.creditsMicros, reference: intent.id, reason: 'Stripe auto-recharge' });
    await recordPaymentSucceeded(a.tx, payment);
  }

  private async chargeSucceeded(a: Applying, charge: Stripe.Charge): Promise<void> {
    const paymentIntentId = idOf(charge.payment_intent);
    const payment = paymentIntentId ? await a.tx.findPayment({ paymentIntentId }) : undefined;
    if (payment && charge.receipt_url) await a.tx.updatePayment(payment.id, { receiptUrl: charge.receipt_url });
  }

  private async invoicePaid(a: Applying, invoice: Stripe.Invoice): Promise<void> {
    const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription ?? null);
    const line = invoice.lines.data[0];
    const tier = this.tierOfPrice.get(idOf(line?.pricing?.price_details?.price ?? null) ?? '');
    if (!subscriptionId || !line || !tier) return;
    await this.setSubscription(a, {
      ...this.current(a.account),
      tier,
      status: 'active',
      graceUntil: null,
      periodEnd: isoOf(line.period.end),
      subscriptionId,
    });
    if (await a.tx.findPayment({ invoiceId: invoice.id })) return;
    const creditsMicros = creditsToMicros(this.config.tiers[tier]!.credits_month);
    const payment = await a.tx.createPayment({
      accountId: a.account.id,
      kind: 'subscription',
      status: 'paid',
      currency: invoice.currency,
      amountMinor: invoice.amount_paid,
      creditsMicros,
      invoiceId: invoice.id,
      paymentIntentId: idOf(invoice.payments?.data[0]?.payment.payment_intent ?? null),
      invoiceUrl: invoice.hosted_invoice_url ?? null,
    });
    if (creditsMicros > 0) await this.credit(a, { kind: 'subscription_credit', amountMicros: creditsMicros, reference: invoice.id, reason: `${tier} monthly credits` });
    await recordPaymentSucceeded(a.tx, payment);
  }

  private async subscriptionUpdated(a: Applying, subscription: Stripe.Subscription): Promise<void> {
    const item = subscription.items.data[0];
    const tier = this.tierOfPrice.get(item?.price.id ?? '') ?? a.account.tier;
    const periodEnd = item ? isoOf(item.current_period_end) : a.account.subscriptionPeriodEnd;
    const base = { tier, periodEnd, cancelAtPeriodEnd: subscription.cancel_at_period_end, subscriptionId: subscription.id };
    switch (subscription.status) {
      case 'active':
      case 'trialing':
        return this.setSubscription(a, { ...base, status: 'active', graceUntil: null });
      case 'past_due':
        return this.setSubscription(a, { ...base, status: 'past_due', graceUntil: this.graceUntil(a.account, a.event.created) });
      case 'canceled':
      case 'unpaid':
      case 'incomplete_expired':
        return this.setSubscription(a, { ...this.lapsed(), subscriptionId: subscription.id });
      default:
        return this.setSubscription(a, { ...base, status: 'inactive', graceUntil: null });
    }
  }

  private async chargeRefunded(a: Applying, charge: Stripe.Charge): Promise<void> {
    const paymentIntentId = idOf(charge.payment_intent);
    const payment = paymentIntentId ? await a.tx.findPayment({ paymentIntentId }) : undefined;
    // amount_refunded is cumulative: only what it adds to the refunds already applied counts.
    if (!payment || charge.amount_refunded <= payment.refundedMinor) return;
    const newMinor = charge.amount_refunded - payment.refundedMinor;
    const fullyRefunded = charge.amount_refunded >= payment.amountMinor;
    await a.tx.updatePayment(payment.id, { refundedMinor: charge.amount_refunded, ...(fullyRefunded && payment.status === 'paid' ? { status: 'refunded' as const } : {}) });
    await this.debit(a, { kind: 'refund', amountMicros: CurrencyRates.share(payment.creditsMicros, newMinor, payment.amountMinor), reference: charge.id, reason: `Stripe refund of ${paymentIntentId}` });
  }

  private async disputeCreated(a: Applying, dispute: Stripe.Dispute): Promise<void> {
    const paymentIntentId = idOf(dispute.payment_intent);
    const payment = paymentIntentId ? await a.tx.findPayment({ paymentIntentId }) : undefined;
    if (!payment || payment.status === 'disputed') return;
    if (!(await a.tx.updatePayment(payment.id, { status: 'disputed' }, payment.status))) return;
    await this.debit(a, { kind: 'adjustment', amountMicros: CurrencyRates.share(payment.creditsMicros, dispute.amount, payment.amountMinor), reference: dispute.id, reason: `Stripe dispute of ${paymentIntentId}` });
    // The operator decides from here (`lmgate accounts reactivate`).
    await a.tx.setAccountStatus(a.account.id, 'suspended');
  }

  /**
   * The payment `ref` names, made paid exactly once: created paid, or moved from pending to
   * paid. Undefined when it was paid (or refunded, disputed) before: nothing to credit.
   */
  private async settle(a: Applying, ref: PaymentRef, create: () => Promise<Payment>, paid: PaymentChanges = {}): Promise<Payment | undefined> {
    const existing = await a.tx.findPayment(ref);
    if (!existing) return create();
    return existing.status === 'pending' ? a.tx.updatePayment(existing.id, { ...paid, status: 'paid' }, 'pending') : undefined;
  }

  private paymentOf(account: Account, kind: 'top_up' | 'auto_recharge', amountMinor: number, currency: string) {
    // A payment in another currency than configured cannot be priced in credits: it is
    // recorded, and credits nothing, for the operator to settle by hand.
    const creditsMicros = currency === this.rates.currency ? this.rates.creditsMicrosOf(amountMinor) : 0;
    return { accountId: account.id, kind, status: 'paid' as const, currency, amountMinor, creditsMicros };
  }

  private async credit(a: Applying, entry: { kind: 'top_up' | 'subscription_credit'; amountMicros: number; reference: string; reason: string }): Promise<void> {
    if (entry.amountMicros <= 0) return;
    const { balanceMicros } = await a.tx.appendLedgerEntry({ accountId: a.account.id, ...entry });
    // A balance back at or above the threshold makes the next crossing charge again.
    const recharge = await a.tx.findAutoRecharge(a.account.id);
    if (recharge?.enabled && !recharge.armed && balanceMicros >= recharge.thresholdMicros) await a.tx.rearmAutoRecharge(a.account.id);
  }

  /** Takes back credits, never more than the balance holds (spent credits cannot be taken). */
  private async debit(a: Applying, entry: { kind: 'refund' | 'adjustment'; amountMicros: number; reference: string; reason: string }): Promise<void> {
    const takeMicros = Math.min(entry.amountMicros, await a.tx.balanceOf(a.account.id));
    if (takeMicros <= 0) return;
    await a.tx.appendLedgerEntry({ accountId: a.account.id, ...entry, amountMicros: -takeMicros });
  }

  private async setSubscription(a: Applying, state: SubscriptionState): Promise<void> {
    // Undefined when a newer state was applied already: nothing changed to tell.
    const account = await a.tx.applySubscriptionState(a.account.id, state, a.event.created);
    if (account) await recordSubscriptionUpdated(a.tx, account);
  }

  private current(account: Account): SubscriptionState {
    return {
      tier: account.tier,
      status: account.subscriptionStatus,
      periodEnd: account.subscriptionPeriodEnd,
      graceUntil: account.subscriptionGraceUntil,
      cancelAtPeriodEnd: account.cancelAtPeriodEnd,
      subscriptionId: null,
    };
  }

  /** The subscription is over: back to the default tier. */
  private lapsed(): Omit<SubscriptionState, 'subscriptionId'> {
    return { tier: this.config.default_tier, status: 'canceled', periodEnd: null, graceUntil: null, cancelAtPeriodEnd: false };
  }

  /** A grace period already running keeps its end; a new one starts at the failure. */
  private graceUntil(account: Account, failedAtUnixSec: number): string {
    if (account.subscriptionStatus === 'past_due' && account.subscriptionGraceUntil) return account.subscriptionGraceUntil;
    return isoOf(failedAtUnixSec + this.config.payments.stripe!.grace_days * DAY_SEC);
  }

  /**
   * The event's account, its row locked for the rest of the transaction and read after the
   * lock: the events of one account apply one at a time, each on the state the one before
   * left (two partial refunds at once must not both start from the old refunded amount).
   */
  private async lockedAccountOf(tx: PaymentEventTx, event: Stripe.Event): Promise<Account | undefined> {
    const found = await this.accountOf(tx, event);
    if (!found) return undefined;
    await tx.lockAccount(found.id);
    return tx.findAccount(found.id);
  }

  /** The account an event is about: named in its metadata, or found by its customer or payment. */
  private async accountOf(tx: PaymentEventTx, event: Stripe.Event): Promise<Account | undefined> {
    const object = event.data.object as unknown as { customer?: unknown; metadata?: Record<string, string> | null; client_reference_id?: string | null; payment_intent?: unknown };
    const named = object.client_reference_id ?? object.metadata?.account_id;
    if (named) return tx.findAccount(named);
    const customerId = idOf((object.customer as string | { id: string } | null | undefined) ?? null);
    const customer = customerId ? await tx.findStripeCustomerById(customerId) : undefined;
    if (customer) return tx.findAccount(customer.accountId);
    const paymentIntentId = idOf((object.payment_intent as string | { id: string } | null | undefined) ?? null);
    const payment = paymentIntentId ? await tx.findPayment({ paymentIntentId }) : undefined;
    return payment && tx.findAccount(payment.accountId);
  }
}

/** Stripe fields hold an id, or the object itself when expanded. */
function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

function isoOf(unixSec: number): string {
  return new Date(unixSec * 1000).toISOString();
}
