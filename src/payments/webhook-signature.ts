// A webhook is believed only when Stripe's signature verifies on the exact bytes received,
// within Stripe's default tolerance (300 s), which refuses replays of old deliveries.
import Stripe from 'stripe';
import { Refusal } from '../errors.js';

export function verifyStripeEvent(stripe: Stripe, rawBody: Buffer, signature: string | string[] | undefined, secret: string): Stripe.Event {
  if (typeof signature !== 'string' || signature === '') throw new Refusal('webhook_signature_invalid');
  try {
    return stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw new Refusal('webhook_signature_invalid');
    throw err;
  }
}
