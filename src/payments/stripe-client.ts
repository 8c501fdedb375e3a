// The official Stripe client, pointed at api_base when set (Stripe's own test servers, or
// a stand-in on loopback in tests).
import Stripe from 'stripe';
import type { StripeConfig } from '../config/schema.js';

export function openStripeClient(config: StripeConfig, secretKey: string): Stripe {
  const base = config.api_base === undefined ? undefined : new URL(config.api_base);
  const protocol = base?.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(secretKey, {
    maxNetworkRetries: 2,
    timeout: 20_000,
    ...(base ? { host: base.hostname, port: base.port || (protocol === 'http' ? 80 : 443), protocol } : {}),
  });
}
