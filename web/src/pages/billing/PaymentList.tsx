// Payments made through Stripe, in money and in credits, with Stripe's hosted receipt or
// invoice. Checkouts never completed (still pending) charged nothing and are left out.
import type { ApiData } from '../../use-api-data';
import { LoadState } from '../../components/LoadState';
import { formatCredits, formatDateTime, formatMoney, formatPaymentKind, formatPlanName } from '../../format';
import type { Payment, Payments } from '../../types';

const STATUS_TONES: Record<string, string> = { paid: 'success', refunded: 'neutral', disputed: 'danger', failed: 'danger' };

export function PaymentList({ payments }: { payments: ApiData<Payments> }) {
  const made = payments.data?.payments.filter((payment) => payment.status !== 'pending');
  return (
    <section className="card flush section" aria-labelledby="payments-title">
      <div className="card-head">
        <h2 id="payments-title" className="card-title">
          Payments
        </h2>
        <p className="muted">Top-ups, auto-recharges and subscription invoices, newest first.</p>
      </div>
      {made === undefined ? (
        <div className="card-body">
          <LoadState error={payments.error} onRetry={payments.reload} />
        </div>
      ) : made.length === 0 ? (
        <p className="muted empty-row">No payments yet.</p>
      ) : (
        <table className="table stacked" data-testid="payments">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Kind</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col" className="num">
                Credits
              </th>
              <th scope="col">Document</th>
            </tr>
          </thead>
          <tbody>
            {made.map((payment) => (
              <PaymentRow key={payment.id} payment={payment} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function PaymentRow({ payment }: { payment: Payment }) {
  return (
    <tr>
      <td data-label="Date">{formatDateTime(payment.createdAt)}</td>
      <td data-label="Kind">{formatPaymentKind(payment.kind)}</td>
      <td data-label="Status">
        <span className={`badge ${STATUS_TONES[payment.status] ?? 'neutral'}`}>{formatPlanName(payment.status)}</span>
      </td>
      <td data-label="Amount" className="num">
        {formatMoney(payment.amountMinor, payment.currency)}
        {payment.refundedMinor > 0 ? <span className="muted sub-amount">{formatMoney(payment.refundedMinor, payment.currency)} refunded</span> : null}
      </td>
      <td data-label="Credits" className="num">
        {formatCredits(payment.creditsMicros)}
      </td>
      <td data-label="Document">
        <StripeDocument payment={payment} />
      </td>
    </tr>
  );
}

function StripeDocument({ payment }: { payment: Payment }) {
  const link = payment.receiptUrl ?? payment.invoiceUrl;
  if (link === null) return <span className="muted">—</span>;
  return (
    <a href={link} target="_blank" rel="noreferrer">
      {payment.receiptUrl === null ? 'Invoice' : 'Receipt'}
    </a>
  );
}
