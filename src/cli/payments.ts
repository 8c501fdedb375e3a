// lmgate payments list | replay EVENT_ID
//
// `list` shows the payments received through Stripe; `replay` applies a stored webhook
// event again (its effects are idempotent: a payment credits once however often it is
// applied). Changes reach running instances through the store's change feed.
import { formatCredits } from '../money.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { StripeEvents } from '../payments/stripe-events.js';
import type { Payment } from '../store/store.js';
import { stringFlag, type ParsedCommand } from './args.js';
import { CliError, withStore, type CliIo } from './context.js';
import { printRecord, printTable } from './output.js';

export async function paymentsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ...rest] = args.positionals;
  switch (action) {
    case 'list': {
      if (rest.length > 0) throw new CliError(`payments list: unexpected ${JSON.stringify(rest[0])}`);
      const limit = Number(stringFlag(args, 'limit') ?? 50);
      if (!Number.isSafeInteger(limit) || limit < 1) throw new CliError('--limit must be a whole number above 0');
      return withStore(config, async (store) => {
        printTable(io, args.json, (await store.listPayments({ limit })).map(paymentView), ['id', 'account_id', 'kind', 'status', 'amount_minor', 'currency', 'credits', 'stripe_object', 'created_at']);
        return 0;
      });
    }
    case 'replay': {
      const [eventId, ...extra] = rest;
      if (!eventId || extra.length > 0) throw new CliError('payments replay: expected one EVENT_ID');
      if (!config.payments.stripe) throw new CliError('payments replay: payments.stripe is not configured');
      return withStore(config, async (store) => {
        const event = await store.findStripeEvent(eventId);
        if (!event) throw new CliError(`no stored Stripe event ${eventId}`);
        await new StripeEvents(config, new Commands(store)).replay(event);
        printRecord(io, args.json, { replayed: event.id, type: event.type, account_id: event.accountId });
        return 0;
      });
    }
    default:
      throw new CliError('payments: expected list or replay');
  }
}

function paymentView(payment: Payment): Record<string, unknown> {
  return {
    id: payment.id,
    account_id: payment.accountId,
    kind: payment.kind,
    status: payment.status,
    amount_minor: payment.amountMinor,
    currency: payment.currency,
    credits: formatCredits(payment.creditsMicros),
    credits_micros: payment.creditsMicros,
    refunded_minor: payment.refundedMinor,
    stripe_object: payment.checkoutSessionId ?? payment.paymentIntentId ?? payment.invoiceId,
    receipt_url: payment.receiptUrl,
    invoice_url: payment.invoiceUrl,
    created_at: payment.createdAt,
  };
}
