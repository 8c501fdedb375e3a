// Payments as the rest of the app sees them: present only when `payments.stripe` is
// configured. One Stripe client, the webhook's signing secret, and the pieces built on them.
import type { Balances } from '../billing/balances.js';
import type { Commands } from '../commands/commands.js';
import { ConfigError, readSecretEnv } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { AutoRechargeStore, PaymentQueries } from '../store/queries.js';
import { AutoRechargeWatch } from './auto-recharge.js';
import { StripeCheckout } from './checkout.js';
import { CurrencyRates } from './currency.js';
import { openStripeClient } from './stripe-client.js';
import { StripeEvents, type EventOutcome } from './stripe-events.js';
import { verifyStripeEvent } from './webhook-signature.js';

export interface Payments {
  rates: CurrencyRates;
  checkout: StripeCheckout;
  events: StripeEvents;
  autoRecharge: AutoRechargeWatch;
  /** Verifies a webhook delivery on its raw bytes and applies it once. */
  receiveWebhook(rawBody: Buffer, signature: string | string[] | undefined): Promise<EventOutcome>;
}

export interface PaymentDeps {
  store: AutoRechargeStore & Pick<PaymentQueries, 'findStripeCustomer'>;
  commands: Commands;
  balances: Balances;
  onError: (err: unknown, accountId: string) => void;
  readSecret?: (name: string) => string | undefined;
}

export function openPayments(config: Config, deps: PaymentDeps): Payments | undefined {
  const stripeConfig = config.payments.stripe;
  if (!stripeConfig) return undefined;
  const readSecret = deps.readSecret ?? readSecretEnv;
  const secretKey = readSecret(stripeConfig.secret_key_env);
  const webhookSecret = readSecret(stripeConfig.webhook_secret_env);
  const missing = [
    ...(secretKey ? [] : [`payments.stripe.secret_key_env: ${stripeConfig.secret_key_env} is not set`]),
    ...(webhookSecret ? [] : [`payments.stripe.webhook_secret_env: ${stripeConfig.webhook_secret_env} is not set`]),
  ];
  if (missing.length > 0) throw new ConfigError(missing);
  const stripe = openStripeClient(stripeConfig, secretKey!);
  const rates = new CurrencyRates(stripeConfig);
  const events = new StripeEvents(config, deps.commands);
  return {
    rates,
    checkout: new StripeCheckout(stripe, deps.store, deps.commands.payments, stripeConfig, rates),
    events,
    autoRecharge: new AutoRechargeWatch(stripe, deps.store, deps.commands.payments, deps.balances, rates, deps.onError),
    receiveWebhook: (rawBody, signature) => events.receive(verifyStripeEvent(stripe, rawBody, signature, webhookSecret!)),
  };
}
