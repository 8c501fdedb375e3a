// A stand-in for Stripe's API on loopback, speaking its wire protocol: form-encoded
// requests (nested keys as `a[b][0]`), JSON objects of the real shapes back, idempotency
// keys honoured. The official client talks to it through its host, port and protocol
// options. Webhook deliveries are signed as Stripe signs them.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export type FormValue = string | FormObject | FormValue[];
export interface FormObject {
  [key: string]: FormValue;
}

export interface StripeRequest {
  method: string;
  path: string;
  params: FormObject;
  idempotencyKey: string | undefined;
}

export interface FakeStripe {
  /** http://127.0.0.1:PORT, for payments.stripe.api_base */
  url: string;
  requests: StripeRequest[];
  /** Objects created, by id. */
  objects: Map<string, Record<string, unknown>>;
  /** Resolves once `count` requests have come to paths starting with `pathPrefix`. */
  waitFor(pathPrefix: string, count: number): Promise<void>;
  /** Makes the next payment intents fail as a declined card does. */
  declineCards: boolean;
  close(): Promise<void>;
}

export const id = (prefix: string): string => `${prefix}_test_${randomBytes(9).toString('hex')}`;

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: StripeRequest[] = [];
  const objects = new Map<string, Record<string, unknown>>();
  const byIdempotencyKey = new Map<string, { status: number; body: unknown }>();
  const waiters: { prefix: string; count: number; resolve: () => void }[] = [];
  let origin = '';

  const answer = (request: StripeRequest): { status: number; body: unknown } => {
    const { method, path, params } = request;
    const save = (object: Record<string, unknown>) => {
      objects.set(object.id as string, object);
      return { status: 200, body: object };
    };
    if (method === 'POST' && path === '/v1/customers') {
      return save({ id: id('cus'), object: 'customer', email: params.email ?? null, metadata: params.metadata ?? {}, created: nowSec(), livemode: false });
    }
    const methods = /^\/v1\/customers\/([^/]+)\/payment_methods$/.exec(path);
    if (method === 'GET' && methods) {
      const data = [{ id: `pm_card_${methods[1]}`, object: 'payment_method', type: 'card', customer: methods[1], card: { brand: 'visa', last4: '4242' } }];
      return { status: 200, body: { object: 'list', data, has_more: false, url: path } };
    }
    if (method === 'POST' && path === '/v1/checkout/sessions') {
      const sessionId = id('cs');
      const item = ((params.line_items as FormValue[] | undefined)?.[0] ?? {}) as FormObject;
      const priceData = item.price_data as FormObject | undefined;
      return save({
        id: sessionId,
        object: 'checkout.session',
        mode: params.mode,
        url: `${origin}/checkout/${sessionId}`,
        customer: params.customer ?? null,
        client_reference_id: params.client_reference_id ?? null,
        amount_total: priceData ? Number(priceData.unit_amount) * Number(item.quantity ?? 1) : 0,
        currency: (priceData?.currency as string | undefined) ?? 'usd',
        metadata: params.metadata ?? {},
        line_items_param: params.line_items,
        payment_intent: null,
        subscription: null,
        payment_status: 'unpaid',
        status: 'open',
        success_url: params.success_url,
        cancel_url: params.cancel_url,
        created: nowSec(),
        livemode: false,
      });
    }
    if (method === 'POST' && path === '/v1/billing_portal/sessions') {
      const portalId = id('bps');
      return save({ id: portalId, object: 'billing_portal.session', customer: params.customer, return_url: params.return_url, url: `${origin}/portal/${portalId}`, created: nowSec(), livemode: false });
    }
    if (method === 'POST' && path === '/v1/payment_intents') {
      if (fake.declineCards) {
        return { status: 402, body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' } } };
      }
      const amount = Number(params.amount);
      return save({
        id: id('pi'),
        object: 'payment_intent',
        amount,
        amount_received: amount,
        currency: params.currency,
        customer: params.customer,
        payment_method: params.payment_method,
        metadata: params.metadata ?? {},
        status: 'succeeded',
        created: nowSec(),
        livemode: false,
      });
    }
    const intent = /^\/v1\/payment_intents\/([\w-]+)$/.exec(path);
    if (method === 'GET' && intent) {
      // Any intent a test's events named exists here, paid by a charge with a hosted receipt.
      const known = objects.get(intent[1]!) ?? { id: intent[1], object: 'payment_intent', status: 'succeeded', metadata: {}, created: nowSec(), livemode: false };
      const charge = { id: `ch_of_${intent[1]}`, object: 'charge', payment_intent: intent[1], receipt_url: `${origin}/receipts/${intent[1]}` };
      const expanded = ((params.expand as FormValue[] | undefined) ?? []).includes('latest_charge');
      return { status: 200, body: { ...known, latest_charge: expanded ? charge : charge.id } };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path})` } } };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // Checkout and the Billing Portal are pages at Stripe: a browser lands on them.
    const hosted = req.method === 'GET' ? /^\/(checkout|portal|receipts)\/([\w-]+)$/.exec(req.url ?? '') : null;
    if (hosted) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><link rel="icon" href="data:,"><title>Fake Stripe ${hosted[1]}</title><h1>Fake Stripe ${hosted[1]}</h1><p>${hosted[2]}</p>`);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const form = req.method === 'GET' ? url.search.slice(1) : Buffer.concat(chunks).toString();
      const idempotencyKey = req.headers['idempotency-key'] as string | undefined;
      const request: StripeRequest = { method: req.method ?? 'GET', path: url.pathname, params: parseForm(form), idempotencyKey };
      const authorized = req.headers.authorization === `Bearer ${FAKE_SECRET_KEY}`;
      const known = idempotencyKey && byIdempotencyKey.get(idempotencyKey);
      const result = !authorized
        ? { status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } } }
        : known || answer(request);
      if (idempotencyKey && !known && authorized) byIdempotencyKey.set(idempotencyKey, result);
      requests.push(request);
      for (const waiter of [...waiters]) {
        if (requests.filter((r) => r.path.startsWith(waiter.prefix)).length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      res.writeHead(result.status, { 'content-type': 'application/json', 'request-id': id('req') });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: FakeStripe = {
    url: origin,
    requests,
    objects,
    declineCards: false,
    waitFor(prefix, count) {
      if (requests.filter((r) => r.path.startsWith(prefix)).length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ prefix, count, resolve }));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return fake;
}

export const FAKE_SECRET_KEY = 'sk_test_lmgate_fake';
export const FAKE_WEBHOOK_SECRET = 'whsec_lmgate_fake';

/** `a[b][0][c]=1` → { a: { b: [ { c: '1' } ] } }, as Stripe reads its form bodies. */
export function parseForm(text: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[');
    let node: FormObject | FormValue[] = root;
    path.forEach((part, i) => {
      const last = i === path.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(path[i + 1]!);
      const slot = node as Record<string, FormValue>;
      if (last) slot[part] = value;
      else slot[part] ??= nextIsIndex ? [] : {};
      node = slot[part] as FormObject | FormValue[];
    });
  }
  return root;
}

export function nowSec(): number {
  return Math.floor(Date.now() / 1000);
}

/** An event as Stripe sends it. */
export function stripeEvent(type: string, object: Record<string, unknown>, options: { id?: string; created?: number } = {}): Record<string, unknown> {
  return {
    id: options.id ?? id('evt'),
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: options.created ?? nowSec(),
    type,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
  };
}

const signer = new Stripe(FAKE_SECRET_KEY);

/** Posts an event to the app as Stripe would, signed with `secret` at `timestamp`. */
export async function deliver(
  origin: string,
  event: Record<string, unknown>,
  options: { secret?: string; timestamp?: number; body?: string; signature?: string | null } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = JSON.stringify(event);
  const header =
    options.signature === undefined
      ? signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? FAKE_WEBHOOK_SECRET, timestamp: options.timestamp })
      : options.signature;
  const res = await fetch(`${origin}/api/payments/stripe/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header === null ? {} : { 'stripe-signature': header }) },
    body: options.body ?? payload,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
