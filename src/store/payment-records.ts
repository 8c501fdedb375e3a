// Payments through Stripe as the Store port holds them (store.ts re-exports them): the
// payments, the webhook events kept, each account's Stripe customer, and auto-recharge.

export type PaymentKind = 'top_up' | 'auto_recharge' | 'subscription';
export type PaymentStatus = 'pending' | 'paid' | 'refunded' | 'disputed' | 'failed';

/** Money received (or expected) through Stripe, naming the Stripe objects it came from. */
export interface Payment {
  id: string;
  accountId: string;
  kind: PaymentKind;
  status: PaymentStatus;
  currency: string;
  /** In the currency's minor units (cents), as Stripe counts. */
  amountMinor: number;
  refundedMinor: number;
  creditsMicros: number;
  checkoutSessionId: string | null;
  paymentIntentId: string | null;
  invoiceId: string | null;
  receiptUrl: string | null;
  invoiceUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewPayment = Pick<Payment, 'accountId' | 'kind' | 'status' | 'currency' | 'amountMinor' | 'creditsMicros'> &
  Partial<Pick<Payment, 'checkoutSessionId' | 'paymentIntentId' | 'invoiceId' | 'receiptUrl' | 'invoiceUrl'>>;

export type PaymentChanges = Partial<Pick<Payment, 'status' | 'paymentIntentId' | 'refundedMinor' | 'receiptUrl' | 'invoiceUrl'>>;

/** A Stripe object a payment names; any one of them finds it. */
export type PaymentRef = { id: string } | { checkoutSessionId: string } | { paymentIntentId: string } | { invoiceId: string };

/** A webhook event as received, kept so it counts once and can be replayed. */
export interface StripeEventRecord {
  id: string;
  type: string;
  accountId: string | null;
  /** The event's JSON as Stripe sent it. */
  payload: string;
  /** Stripe's time, Unix seconds. */
  createdAt: number;
  processedAt: string;
}

export interface StripeCustomer {
  accountId: string;
  customerId: string;
  subscriptionId: string | null;
  /** Stripe's time (Unix seconds) of the newest subscription state applied. */
  stateAt: number;
}

/** "When my balance falls below the threshold, add the amount." */
export interface AutoRecharge {
  accountId: string;
  thresholdMicros: number;
  amountMinor: number;
  enabled: boolean;
  /** May fire at the next crossing of the threshold. */
  armed: boolean;
  /** Charges fired so far. */
  sequence: number;
  /** Why it turned itself off, for the dashboard. */
  notice: string | null;
}
