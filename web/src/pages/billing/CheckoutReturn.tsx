// What Stripe's Checkout comes back to (/billing/plans?flow=…&checkout=…): a canceled
// checkout charged nothing; a successful one is waited for until the webhook has been
// applied, since only the webhook grants credits or changes the plan.
import { useEffect } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../../api';
import { Notice } from '../../components/Notice';
import { formatCredits, formatMoney, formatPlanName } from '../../format';
import type { Ledger, Payment, Payments, Plans } from '../../types';
import { usePoll } from '../../use-poll';

export function CheckoutReturn({ onSettled }: { onSettled(): void }) {
  const [params] = useSearchParams();
  const checkout = params.get('checkout');
  if (checkout === 'canceled') return <Notice tone="info">Checkout was canceled. Nothing was charged.</Notice>;
  if (checkout !== 'success') return null;
  return params.get('flow') === 'subscribe' ? (
    <SubscriptionReturn onSettled={onSettled} />
  ) : (
    <TopUpReturn sessionId={params.get('session_id') ?? ''} onSettled={onSettled} />
  );
}

function TopUpReturn({ sessionId, onSettled }: { sessionId: string; onSettled(): void }) {
  const { result, timedOut } = usePoll(sessionId, async () => {
    const { payments } = await api<Payments>('/payments');
    const payment = payments.find((candidate) => candidate.checkoutSessionId === sessionId);
    if (payment === undefined || payment.status === 'pending') return undefined;
    const { balanceMicros } = await api<Ledger>('/ledger?limit=1');
    return { payment, balanceMicros };
  });
  useSettled(result, onSettled);

  if (result !== undefined) return <TopUpOutcome payment={result.payment} balanceMicros={result.balanceMicros} />;
  return timedOut ? (
    <Notice tone="warning">Your payment is still being processed. Your credits are added as soon as Stripe confirms it, usually within minutes.</Notice>
  ) : (
    <Notice tone="info">Thank you. Waiting for Stripe to confirm your payment…</Notice>
  );
}

function TopUpOutcome({ payment, balanceMicros }: { payment: Payment; balanceMicros: number }) {
  if (payment.status !== 'paid') {
    return <Notice tone="error">The payment of {formatMoney(payment.amountMinor, payment.currency)} did not go through, and no credits were added.</Notice>;
  }
  return (
    <Notice tone="success">
      {formatMoney(payment.amountMinor, payment.currency)} paid: {formatCredits(payment.creditsMicros)} credits were added. Your balance is now{' '}
      {formatCredits(balanceMicros)} credits.
    </Notice>
  );
}

function SubscriptionReturn({ onSettled }: { onSettled(): void }) {
  const { result, timedOut } = usePoll('subscribe', async () => {
    const plans = await api<Plans>('/plans');
    const current = plans.plans.find((plan) => plan.current);
    return plans.subscriptionStatus === 'active' && current?.subscription === true ? current.name : undefined;
  });
  useSettled(result, onSettled);

  if (result !== undefined) return <Notice tone="success">You are now subscribed to the {formatPlanName(result)} plan.</Notice>;
  return timedOut ? (
    <Notice tone="warning">Your subscription is still being processed. Your plan changes as soon as Stripe confirms the payment.</Notice>
  ) : (
    <Notice tone="info">Thank you. Waiting for Stripe to confirm your subscription…</Notice>
  );
}

/** Once the outcome is in, the rest of the page reads its new state. */
function useSettled(result: unknown, onSettled: () => void) {
  const settled = result !== undefined;
  useEffect(() => {
    if (settled) onSettled();
  }, [settled, onSettled]);
}
