// The part of KyselyStore (kysely-store.ts) that every other part builds on: the database
// or transaction it runs on, and how a write gets its transaction; with it, the store's
// payments (Stripe events and customers, payments, auto-recharge, subscription state).
import type { Dialect } from './dialect.js';
import * as payments from './payments.js';
import type { Db } from './sql.js';
import type { Account, AutoRecharge, NewPayment, Payment, PaymentChanges, PaymentRef, PaymentStatus, StripeCustomer, StripeEventRecord, SubscriptionState } from './store.js';

export abstract class KyselyPaymentStore {
  constructor(
    readonly db: Db,
    protected readonly sqlDialect: Dialect,
    /** True for the store handed to a `transaction` callback: everything runs on its transaction. */
    protected readonly inTransaction: boolean,
  ) {}

  protected write<T>(fn: (trx: Db) => Promise<T>): Promise<T> {
    return this.inTransaction ? fn(this.db) : this.sqlDialect.transaction(this.db, fn);
  }

  recordStripeEvent(event: StripeEventRecord): Promise<boolean> {
    return payments.recordStripeEvent(this.db, event);
  }

  findStripeEvent(id: string): Promise<StripeEventRecord | undefined> {
    return payments.findStripeEvent(this.db, id);
  }

  listStripeEvents(options?: { limit?: number }): Promise<StripeEventRecord[]> {
    return payments.listStripeEvents(this.db, options);
  }

  findStripeCustomer(accountId: string): Promise<StripeCustomer | undefined> {
    return payments.findStripeCustomer(this.db, accountId);
  }

  findStripeCustomerById(customerId: string): Promise<StripeCustomer | undefined> {
    return payments.findStripeCustomerById(this.db, customerId);
  }

  saveStripeCustomer(accountId: string, customerId: string): Promise<StripeCustomer> {
    return payments.saveStripeCustomer(this.db, accountId, customerId);
  }

  async lockAccount(accountId: string): Promise<void> {
    if (!this.inTransaction) throw new Error('lockAccount holds a lock only inside a transaction');
    await this.sqlDialect.lockBalances(this.db, [accountId]);
  }

  applySubscriptionState(accountId: string, state: SubscriptionState, atUnixSec: number): Promise<Account | undefined> {
    return this.write((trx) => payments.applySubscriptionState(trx, this.sqlDialect, accountId, state, atUnixSec));
  }

  createPayment(payment: NewPayment): Promise<Payment> {
    return payments.createPayment(this.db, payment);
  }

  findPayment(ref: PaymentRef): Promise<Payment | undefined> {
    return payments.findPayment(this.db, ref);
  }

  updatePayment(id: string, changes: PaymentChanges, fromStatus?: PaymentStatus): Promise<Payment | undefined> {
    return payments.updatePayment(this.db, id, changes, fromStatus);
  }

  listPayments(options?: { accountId?: string; limit?: number }): Promise<Payment[]> {
    return payments.listPayments(this.db, options);
  }

  findAutoRecharge(accountId: string): Promise<AutoRecharge | undefined> {
    return payments.findAutoRecharge(this.db, accountId);
  }

  setAutoRecharge(accountId: string, settings: { thresholdMicros: number; amountMinor: number; enabled: boolean }): Promise<AutoRecharge> {
    return payments.setAutoRecharge(this.db, accountId, settings);
  }

  claimAutoRecharge(accountId: string): Promise<number | undefined> {
    return payments.claimAutoRecharge(this.db, accountId);
  }

  rearmAutoRecharge(accountId: string): Promise<void> {
    return payments.rearmAutoRecharge(this.db, accountId);
  }

  disableAutoRecharge(accountId: string, notice: string): Promise<void> {
    return payments.disableAutoRecharge(this.db, accountId, notice);
  }
}
