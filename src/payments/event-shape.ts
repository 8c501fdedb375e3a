// What a Stripe event must look like before lmgate reads it. A body with a valid signature
// came from Stripe (or from whoever holds the webhook secret), but its shape is still
// checked: the envelope every event has, what finds its account, and, for the events
// lmgate applies, each field the application reads. Anything else is refused as a bad
// delivery (400), before any lookup, and nothing is recorded or moved. Fields lmgate does
// not read are left to Stripe: an event may carry more than these schemas say.
import { Type, type TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';

const Id = Type.String({ minLength: 1 });
const Count = Type.Integer({ minimum: 0 });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A Stripe reference: the id, or the expanded object with its id. */
const Ref = Nullable(Type.Union([Id, Type.Object({ id: Id })]));
const Metadata = Nullable(Type.Record(Type.String(), Type.String()));

/** What finds an event's account (stripe-events.ts `accountOf`): each optional, each typed where present. */
const AccountFields = {
  client_reference_id: Type.Optional(Nullable(Id)),
  metadata: Type.Optional(Metadata),
  customer: Type.Optional(Ref),
  payment_intent: Type.Optional(Ref),
};

const Envelope = Type.Object({
  id: Id,
  object: Type.Literal('event'),
  type: Type.String({ minLength: 1 }),
  created: Count,
  data: Type.Object({ object: Type.Object(AccountFields) }),
});

const CheckoutSession = Type.Object({
  ...AccountFields,
  id: Id,
  mode: Type.String(),
  payment_status: Type.String(),
  amount_total: Type.Optional(Nullable(Count)),
  currency: Type.Optional(Nullable(Type.String())),
});
const PaymentIntent = Type.Object({ ...AccountFields, id: Id, amount_received: Count, currency: Type.String() });
const ChargeSucceeded = Type.Object({ ...AccountFields, id: Id, receipt_url: Type.Optional(Nullable(Type.String())) });
const ChargeRefunded = Type.Object({ ...AccountFields, id: Id, amount_refunded: Count });
const Invoice = Type.Object({
  ...AccountFields,
  id: Id,
  currency: Type.String(),
  amount_paid: Count,
  lines: Type.Object({ data: Type.Array(Type.Object({ period: Type.Object({ end: Count }) })) }),
});
const Subscription = Type.Object({
  ...AccountFields,
  id: Id,
  status: Type.String(),
  cancel_at_period_end: Type.Boolean(),
  items: Type.Object({ data: Type.Array(Type.Object({ price: Type.Object({ id: Type.String() }), current_period_end: Count })) }),
});
const Dispute = Type.Object({ ...AccountFields, id: Id, amount: Count });

/** The object each applied event type carries (stripe-events.ts `apply`). */
const OBJECT_OF_TYPE: Record<string, TSchema> = {
  'checkout.session.completed': CheckoutSession,
  'payment_intent.succeeded': PaymentIntent,
  'payment_intent.payment_failed': Type.Object(AccountFields),
  'charge.succeeded': ChargeSucceeded,
  'charge.refunded': ChargeRefunded,
  'invoice.paid': Invoice,
  'invoice.payment_failed': Type.Object(AccountFields),
  'customer.subscription.updated': Subscription,
  'customer.subscription.deleted': Type.Object(AccountFields),
  'charge.dispute.created': Dispute,
};

const ajv = new Ajv({ strict: true, coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false });
const checkEnvelope = ajv.compile(Envelope);
const checkObject = new Map(Object.entries(OBJECT_OF_TYPE).map(([type, schema]) => [type, ajv.compile(schema)]));

/** Why `event` is not one lmgate can take, or undefined when it is. */
export function eventShapeProblem(event: unknown): string | undefined {
  if (!checkEnvelope(event)) return `not a Stripe event: ${describe(checkEnvelope.errors)}`;
  const check = checkObject.get(event.type);
  if (check && !check(event.data.object)) return `${event.type} without what lmgate reads: ${describe(check.errors)}`;
  return undefined;
}

function describe(errors: typeof checkEnvelope.errors): string {
  const first = errors?.[0];
  return first ? `${first.instancePath || '(the body)'} ${first.message ?? 'is not valid'}` : 'not valid';
}
