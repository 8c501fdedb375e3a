// POST /api/payments/stripe/webhook: Stripe's deliveries. The signature covers the exact
// bytes sent, so this route reads the body raw, in a scope of its own. It answers 2xx only
// once the event's effect is committed, so Stripe's retries heal any failure.
import type { FastifyInstance } from 'fastify';
import type { Payments } from '../../payments/payments.js';

export async function stripeWebhookRoute(app: FastifyInstance, payments: Payments): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/api/payments/stripe/webhook', async (request) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await payments.receiveWebhook(raw, request.headers['stripe-signature']);
      return { received: true, duplicate: outcome === 'duplicate' };
    });
  });
}
