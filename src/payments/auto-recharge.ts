// Auto-recharge: when spending takes an account's balance below its threshold, charge its
// saved card off-session, once per crossing. The check runs after the response, never on
// the request's path; the store's conditional claim (not this process's memory) decides
// which of many instances charges; the credits arrive by webhook like any payment.
import type Stripe from 'stripe';
import type { Balances } from '../billing/balances.js';
import type { PaymentCommands } from '../commands/payments.js';
import type { AutoRechargeStore } from '../store/queries.js';
import type { AutoRecharge } from '../store/store.js';
import type { CurrencyRates } from './currency.js';

/**
 * How long an account's settings are trusted without a store read. Every answer asks for a
 * check, and most accounts have no auto-recharge: the store is read once a while per
 * account, not once per request. Settings saved on another instance apply after this.
 */
const SETTINGS_TTL_MS = 30_000;

export class AutoRechargeWatch {
  /** The check running per account; a spend during it asks for one more after it. */
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly settings = new Map<string, { value: AutoRecharge | undefined; readAtMs: number }>();

  constructor(
    private readonly stripe: Stripe,
    private readonly store: AutoRechargeStore,
    private readonly commands: PaymentCommands,
    private readonly balances: Balances,
    private readonly rates: CurrencyRates,
    private readonly onError: (err: unknown, accountId: string) => void,
  ) {}

  /** The account spent credits: check it soon. Returns at once. */
  spent(accountId: string): void {
    if (this.running.has(accountId)) {
      this.again.add(accountId);
      return;
    }
    const check = this.check(accountId)
      .catch((err: unknown) => this.onError(err, accountId))
      .finally(() => {
        this.running.delete(accountId);
        if (this.again.delete(accountId)) this.spent(accountId);
      });
    this.running.set(accountId, check);
  }

  /** The account's settings changed (saved here, or claimed, re-armed, turned off): read them again. */
  forget(accountId: string): void {
    this.settings.delete(accountId);
  }

  /** Resolves once no check is running (tests, and a clean shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  private async settingsOf(accountId: string): Promise<AutoRecharge | undefined> {
    const cached = this.settings.get(accountId);
    if (cached && Date.now() - cached.readAtMs < SETTINGS_TTL_MS) return cached.value;
    const value = await this.store.findAutoRecharge(accountId);
    this.settings.set(accountId, { value, readAtMs: Date.now() });
    return value;
  }

  private async check(accountId: string): Promise<void> {
    const settings = await this.settingsOf(accountId);
    if (!settings?.enabled) return;
    const { availableMicros } = await this.balances.of(accountId);
    if (availableMicros >= settings.thresholdMicros) {
      if (!settings.armed) {
        await this.commands.rearmAutoRecharge(accountId);
        this.forget(accountId);
      }
      return;
    }
    if (!settings.armed) return;
    this.forget(accountId);
    const sequence = await this.commands.claimAutoRecharge(accountId);
    if (sequence === undefined) return;
    try {
      await this.charge(accountId, settings.amountMinor, sequence);
    } catch (err) {
      await this.commands.disableAutoRecharge(accountId, `The automatic top-up failed (${err instanceof Error ? err.message : String(err)}); auto-recharge is off until you turn it on again.`);
      throw err;
    }
  }

  private async charge(accountId: string, amountMinor: number, sequence: number): Promise<void> {
    const customer = await this.store.findStripeCustomer(accountId);
    if (!customer) throw new Error('no saved payment method');
    const methods = await this.stripe.customers.listPaymentMethods(customer.customerId, { limit: 1 });
    const method = methods.data[0];
    if (!method) throw new Error('no saved payment method');
    const intent = await this.stripe.paymentIntents.create(
      {
        amount: amountMinor,
        currency: this.rates.currency,
        customer: customer.customerId,
        payment_method: method.id,
        off_session: true,
        confirm: true,
        metadata: { account_id: accountId, purpose: 'auto_recharge' },
      },
      // A retry of this crossing's charge (the client's, or ours) is the same charge.
      { idempotencyKey: `lmgate-auto-recharge-${accountId}-${sequence}` },
    );
    if (intent.status !== 'succeeded' && intent.status !== 'processing') throw new Error(`payment ${intent.status}`);
    // The webhook may have recorded it already; it credits either way.
    await this.store.transaction(async (tx) => {
      if (await tx.findPayment({ paymentIntentId: intent.id })) return;
      await tx.createPayment({ accountId, kind: 'auto_recharge', status: 'pending', currency: this.rates.currency, amountMinor, creditsMicros: this.rates.creditsMicrosOf(amountMinor), paymentIntentId: intent.id });
    });
  }
}
