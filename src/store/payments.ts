// Payments through Stripe: the events received (each once, by id), the payments they
// record, each account's Stripe customer with its newest subscription state, and
// auto-recharge settings with their once-per-crossing guard.
import type { Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import { newId } from '../ids.js';
import { toAccount } from './accounts.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { checkLimit, now, type Db } from './sql.js';
import type {
  Account,
  AutoRecharge,
  NewPayment,
  Payment,
  PaymentChanges,
  PaymentKind,
  PaymentRef,
  PaymentStatus,
  StripeCustomer,
  StripeEventRecord,
  SubscriptionState,
} from './store.js';
import type { AutoRechargesTable, PaymentsTable, StripeCustomersTable, StripeEventsTable } from './tables.js';

export async function recordStripeEvent(db: Db, event: StripeEventRecord): Promise<boolean> {
  // ON CONFLICT DO NOTHING waits for a concurrent insert of the same id to commit or roll
  // back, so of two instances receiving one event exactly one sees it as new.
  const inserted = await db
    .insertInto('stripe_events')
    .values({ id: event.id, type: event.type, account_id: event.accountId, payload: event.payload, created_at: event.createdAt, processed_at: event.processedAt })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function findStripeEvent(db: Db, id: string): Promise<StripeEventRecord | undefined> {
  const row = await db.selectFrom('stripe_events').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toStripeEvent(row);
}

export async function listStripeEvents(db: Db, options: { limit?: number } = {}): Promise<StripeEventRecord[]> {
  let query = db.selectFrom('stripe_events').selectAll().orderBy('processed_at', 'desc').orderBy('id', 'desc');
  if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
  return (await query.execute()).map(toStripeEvent);
}

export async function findStripeCustomer(db: Db, accountId: string): Promise<StripeCustomer | undefined> {
  const row = await db.selectFrom('stripe_customers').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  return row && toStripeCustomer(row);
}

export async function findStripeCustomerById(db: Db, customerId: string): Promise<StripeCustomer | undefined> {
  const row = await db.selectFrom('stripe_customers').selectAll().where('customer_id', '=', customerId).executeTakeFirst();
  return row && toStripeCustomer(row);
}

export async function saveStripeCustomer(db: Db, accountId: string, customerId: string): Promise<StripeCustomer> {
  await db
    .insertInto('stripe_customers')
    .values({ account_id: accountId, customer_id: customerId, subscription_id: null, state_at: 0, created_at: now() })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
  return (await findStripeCustomer(db, accountId))!;
}

/** In the caller's transaction. */
export async function applySubscriptionState(trx: Db, dialect: Dialect, accountId: string, state: SubscriptionState, atUnixSec: number): Promise<Account | undefined> {
  // The conditional update is the ordering rule: equal times apply (a replay, or two
  // events of one second), older ones do not.
  const claimed = await trx
    .updateTable('stripe_customers')
    .set({ state_at: atUnixSec, subscription_id: state.subscriptionId })
    .where('account_id', '=', accountId)
    .where('state_at', '<=', atUnixSec)
    .returning('account_id')
    .executeTakeFirst();
  if (!claimed) return undefined;
  const row = await trx
    .updateTable('accounts')
    .set({
      tier: state.tier,
      subscription_status: state.status,
      subscription_period_end: state.periodEnd,
      subscription_grace_until: state.graceUntil,
      subscription_cancel_at_period_end: state.cancelAtPeriodEnd ? 1 : 0,
      updated_at: now(),
    })
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
  await recordChange(trx, dialect, 'account', accountId);
  return toAccount(row);
}

export async function createPayment(db: Db, payment: NewPayment): Promise<Payment> {
  const at = now();
  const row: Selectable<PaymentsTable> = {
    id: newId('pay'),
    account_id: payment.accountId,
    kind: payment.kind,
    status: payment.status,
    currency: payment.currency,
    amount_minor: checkMicros(payment.amountMinor),
    refunded_minor: 0,
    credits_micros: checkMicros(payment.creditsMicros),
    checkout_session_id: payment.checkoutSessionId ?? null,
    payment_intent_id: payment.paymentIntentId ?? null,
    invoice_id: payment.invoiceId ?? null,
    receipt_url: payment.receiptUrl ?? null,
    invoice_url: payment.invoiceUrl ?? null,
    created_at: at,
    updated_at: at,
  };
  await db.insertInto('payments').values(row).execute();
  return toPayment(row);
}

export async function findPayment(db: Db, ref: PaymentRef): Promise<Payment | undefined> {
  const [column, value] =
    'id' in ref
      ? (['id', ref.id] as const)
      : 'checkoutSessionId' in ref
      ? (['checkout_session_id', ref.checkoutSessionId] as const)
      : 'paymentIntentId' in ref
        ? (['payment_intent_id', ref.paymentIntentId] as const)
        : (['invoice_id', ref.invoiceId] as const);
  const row = await db.selectFrom('payments').selectAll().where(column, '=', value).executeTakeFirst();
  return row && toPayment(row);
}

export async function updatePayment(db: Db, id: string, changes: PaymentChanges, fromStatus?: PaymentStatus): Promise<Payment | undefined> {
  let query = db
    .updateTable('payments')
    .set({
      ...(changes.status === undefined ? {} : { status: changes.status }),
      ...(changes.paymentIntentId === undefined ? {} : { payment_intent_id: changes.paymentIntentId }),
      ...(changes.refundedMinor === undefined ? {} : { refunded_minor: checkMicros(changes.refundedMinor) }),
      ...(changes.receiptUrl === undefined ? {} : { receipt_url: changes.receiptUrl }),
      ...(changes.invoiceUrl === undefined ? {} : { invoice_url: changes.invoiceUrl }),
      updated_at: now(),
    })
    .where('id', '=', id);
  if (fromStatus !== undefined) query = query.where('status', '=', fromStatus);
  const row = await query.returningAll().executeTakeFirst();
  return row && toPayment(row);
}

export async function listPayments(db: Db, options: { accountId?: string; limit?: number } = {}): Promise<Payment[]> {
  let query = db.selectFrom('payments').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc');
  if (options.accountId !== undefined) query = query.where('account_id', '=', options.accountId);
  if (options.limit !== undefined) query = query.limit(checkLimit(options.limit));
  return (await query.execute()).map(toPayment);
}

export async function findAutoRecharge(db: Db, accountId: string): Promise<AutoRecharge | undefined> {
  const row = await db.selectFrom('auto_recharges').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  return row && toAutoRecharge(row);
}

export async function setAutoRecharge(db: Db, accountId: string, settings: { thresholdMicros: number; amountMinor: number; enabled: boolean }): Promise<AutoRecharge> {
  const values = {
    threshold_micros: checkMicros(settings.thresholdMicros),
    amount_minor: checkMicros(settings.amountMinor),
    enabled: settings.enabled ? 1 : 0,
    armed: 1,
    notice: null,
    updated_at: now(),
  };
  await db
    .insertInto('auto_recharges')
    .values({ account_id: accountId, sequence: 0, ...values })
    .onConflict((oc) => oc.column('account_id').doUpdateSet(values))
    .execute();
  return (await findAutoRecharge(db, accountId))!;
}

export async function claimAutoRecharge(db: Db, accountId: string): Promise<number | undefined> {
  const row = await db
    .updateTable('auto_recharges')
    .set((eb) => ({ armed: 0, sequence: eb('sequence', '+', 1), updated_at: now() }))
    .where('account_id', '=', accountId)
    .where('enabled', '=', 1)
    .where('armed', '=', 1)
    .returning('sequence')
    .executeTakeFirst();
  return row && Number(row.sequence);
}

export async function rearmAutoRecharge(db: Db, accountId: string): Promise<void> {
  await db.updateTable('auto_recharges').set({ armed: 1, updated_at: now() }).where('account_id', '=', accountId).where('enabled', '=', 1).where('armed', '=', 0).execute();
}

export async function disableAutoRecharge(db: Db, accountId: string, notice: string): Promise<void> {
  await db.updateTable('auto_recharges').set({ enabled: 0, notice: notice.slice(0, 500), updated_at: now() }).where('account_id', '=', accountId).execute();
}

function toStripeEvent(row: Selectable<StripeEventsTable>): StripeEventRecord {
  return { id: row.id, type: row.type, accountId: row.account_id, payload: row.payload, createdAt: Number(row.created_at), processedAt: row.processed_at };
}

function toStripeCustomer(row: Selectable<StripeCustomersTable>): StripeCustomer {
  return { accountId: row.account_id, customerId: row.customer_id, subscriptionId: row.subscription_id, stateAt: Number(row.state_at) };
}

function toPayment(row: Selectable<PaymentsTable>): Payment {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as PaymentKind,
    status: row.status as PaymentStatus,
    currency: row.currency,
    amountMinor: checkMicros(Number(row.amount_minor)),
    refundedMinor: checkMicros(Number(row.refunded_minor)),
    creditsMicros: checkMicros(Number(row.credits_micros)),
    checkoutSessionId: row.checkout_session_id,
    paymentIntentId: row.payment_intent_id,
    invoiceId: row.invoice_id,
    receiptUrl: row.receipt_url,
    invoiceUrl: row.invoice_url,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toAutoRecharge(row: Selectable<AutoRechargesTable>): AutoRecharge {
  return {
    accountId: row.account_id,
    thresholdMicros: checkMicros(Number(row.threshold_micros)),
    amountMinor: checkMicros(Number(row.amount_minor)),
    enabled: Number(row.enabled) === 1,
    armed: Number(row.armed) === 1,
    sequence: Number(row.sequence),
    notice: row.notice,
  };
}
