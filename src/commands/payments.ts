// Payments: a payment provider's event, recorded with its effects in one unit of work; a
// top-up waiting for its Checkout Session, a customer and a receipt remembered; an
// account's auto-recharge set, claimed for one charge, armed again or turned off.
import type { AutoRecharge, NewPayment, Payment, Store, StripeCustomer } from '../store/store.js';
import { CommandSet } from './unit-of-work.js';

export class PaymentCommands extends CommandSet {
  /** `write` records the event and applies it; the caches follow what it changed. */
  apply<T>(write: (tx: Store) => Promise<T>): Promise<T> {
    return this.commit(write);
  }

  /** A top-up started at Checkout: pending until its event says it was paid. */
  recordPending(payment: NewPayment): Promise<Payment> {
    return this.store.createPayment(payment);
  }

  saveCustomer(accountId: string, customerId: string): Promise<StripeCustomer> {
    return this.store.saveStripeCustomer(accountId, customerId);
  }

  /** A receipt asked of Stripe when first opened, kept for the next time. */
  async saveReceipt(paymentId: string, receiptUrl: string): Promise<void> {
    await this.store.updatePayment(paymentId, { receiptUrl });
  }

  setAutoRecharge(accountId: string, settings: { thresholdMicros: number; amountMinor: number; enabled: boolean }): Promise<AutoRecharge> {
    return this.store.setAutoRecharge(accountId, settings);
  }

  /** The one charge of a crossing of the threshold: its sequence number, or undefined when another instance has it. */
  claimAutoRecharge(accountId: string): Promise<number | undefined> {
    return this.store.claimAutoRecharge(accountId);
  }

  /** The balance is back above the threshold: the next crossing charges again. */
  rearmAutoRecharge(accountId: string): Promise<void> {
    return this.store.rearmAutoRecharge(accountId);
  }

  /** A charge failed: off until the owner turns it on again, with the notice they see. */
  disableAutoRecharge(accountId: string, notice: string): Promise<void> {
    return this.store.disableAutoRecharge(accountId, notice);
  }
}
