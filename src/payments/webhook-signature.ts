// A webhook is believed only when Stripe's signature verifies on the exact bytes received,
// within Stripe's default tolerance (300 s), which refuses replays of old deliveries; and
// it is read only when it has the shape of an event lmgate can apply (event-shape.ts).
import Stripe from 'stripe';
import { Refusal, WebhookEventInvalidError } from '../errors.js';
import { eventShapeProblem } from './event-shape.js';

export function verifyStripeEvent(stripe: Stripe, rawBody: Buffer, signature: string | string[] | undefined, secret: string): Stripe.Event {
  if (typeof signature !== 'string' || signature === '') throw new Refusal('webhook_signature_invalid');
  let event: unknown;
  try {
    event = stripe.webhooks.constructEvent(rawBody, signature, secret);
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) throw new Refusal('webhook_signature_invalid');
    // Signed, but not JSON (or anything else the SDK refuses once the signature holds).
    throw new WebhookEventInvalidError(`webhook body refused: ${(err as Error).message}`, { cause: err });
  }
  const problem = eventShapeProblem(event);
  if (problem !== undefined) throw new WebhookEventInvalidError(`webhook body refused: ${problem}`);
  return event as Stripe.Event;
}
