// Billing: the plans (the current one marked; free ones switchable here, paid ones through
// Stripe when payments are on, else through the operator), the balance with its ledger,
// and redeeming a code. With payments on, also adding credits, the payments made and
// auto-recharge; Stripe's Checkout returns here with the outcome in the query.
import { useCallback, useState, type FormEvent } from 'react';
import { api, ApiError } from '../api';
import { ConfirmAction } from '../components/ConfirmAction';
import { Dialog } from '../components/Dialog';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { PlanLimits } from '../components/PlanLimits';
import { TextField } from '../components/TextField';
import { AccountStanding } from '../components/AccountStanding';
import { ContactOperator } from '../components/ContactOperator';
import { formatCredits, formatDateTime, formatLedgerKind, formatNumber, formatPlanName, formatPrice, formatWait } from '../format';
import { usePageTitle } from '../page-title';
import { useSession } from '../session';
import type { Account, EnabledPayments, Ledger, PaymentOptions, Payments, Plan, PlanChanged, Plans, Redemption, Standing } from '../types';
import { useApiData } from '../use-api-data';
import { AddCredits } from './billing/AddCredits';
import { AutoRechargeSettings } from './billing/AutoRechargeSettings';
import { BalanceHistory } from './billing/BalanceHistory';
import { CheckoutReturn } from './billing/CheckoutReturn';
import { PaymentList } from './billing/PaymentList';
import { StripeButton } from './billing/StripeButton';


export function PlansPage() {
  usePageTitle('Billing');
  const plans = useApiData<Plans>('/plans');
  // The balance; its history is BalanceHistory's, reloaded whenever the balance is.
  const ledger = useApiData<Ledger>('/ledger?limit=1');
  const [historyVersion, setHistoryVersion] = useState(0);
  const options = useApiData<PaymentOptions>('/payments/options');
  const payments = enabledPayments(options.data);
  // Plans change in Stripe's portal while a paid subscription runs, so it is not left billing.
  const subscribed = payments !== null && plans.data?.subscriptionStatus === 'active' && plans.data.plans.some((plan) => plan.current && plan.subscription);
  const paymentList = useApiData<Payments>(payments === null ? null : '/payments');
  const { updateAccount } = useSession();
  const [switching, setSwitching] = useState<Plan | null>(null);
  const [switched, setSwitched] = useState<string | null>(null);

  function planChanged(account: Account) {
    updateAccount(account);
    setSwitching(null);
    setSwitched(account.tier);
    plans.reload();
    ledger.reload();
    setHistoryVersion((v) => v + 1);
  }

  function redeemed(redemption: Redemption) {
    ledger.setData((current) => (current === undefined ? current : { ...current, balanceMicros: redemption.balanceMicros }));
    ledger.reload();
    setHistoryVersion((v) => v + 1);
  }

  const { reload: reloadPlans } = plans;
  const { reload: reloadLedger } = ledger;
  const { reload: reloadPaymentList } = paymentList;
  const checkoutSettled = useCallback(() => {
    reloadPlans();
    reloadLedger();
    setHistoryVersion((v) => v + 1);
    reloadPaymentList();
  }, [reloadPlans, reloadLedger, reloadPaymentList]);

  return (
    <>
      <PageHeader title="Billing" description="Your plan, your credits and where they went." />
      {payments === null ? null : <CheckoutReturn onSettled={checkoutSettled} />}
      <section aria-labelledby="plans-title" className="section">
        <h2 id="plans-title" className="section-title">
          Plans
        </h2>
        {switched === null ? null : <Notice tone="success">You are now on the {formatPlanName(switched)} plan.</Notice>}
        {plans.data === undefined ? null : <AccountStanding standing={plans.data.standing} plan={plans.data.current} onPlans />}
        {plans.data === undefined ? (
          <LoadState error={plans.error} onRetry={plans.reload} />
        ) : (
          <div className="plan-grid">
            {plans.data.plans.map((plan) => (
              <PlanCard key={plan.name} plan={plan} payments={payments} subscribed={subscribed} standing={plans.data!.standing.state} onSwitch={() => setSwitching(plan)} />
            ))}
          </div>
        )}
      </section>

      <div className="grid two section">
        <section className="card" aria-labelledby="credit-title">
          <h2 id="credit-title" className="card-title">
            Balance
          </h2>
          <p className="metric">
            <span className="metric-value" data-testid="balance">
              {ledger.data === undefined ? '…' : formatCredits(ledger.data.balanceMicros)}
            </span>{' '}
            <span className="metric-unit">credits</span>
          </p>
          <p className="muted">Requests are paid from this balance, by the tokens they read and write.</p>
        </section>
        {payments === null ? <RedeemCode onRedeemed={redeemed} /> : <AddCredits payments={payments} />}
      </div>
      {payments === null ? null : (
        <>
          <div className="grid two section">
            <AutoRechargeSettings payments={payments} />
            <RedeemCode onRedeemed={redeemed} />
          </div>
          <PaymentList payments={paymentList} />
        </>
      )}

      <BalanceHistory version={historyVersion} />

      <Dialog open={switching !== null} title={`Switch to the ${formatPlanName(switching?.name ?? '')} plan?`} onClose={() => setSwitching(null)}>
        {switching === null ? null : <ConfirmSwitch plan={switching} onSwitched={planChanged} onCancel={() => setSwitching(null)} />}
      </Dialog>
    </>
  );
}

function enabledPayments(options: PaymentOptions | undefined): EnabledPayments | null {
  if (options?.enabled !== true) return null;
  const { currency, minorPerUnit, creditsMicrosPerUnit, minMinor, maxMinor } = options;
  if (currency === null || minorPerUnit === null || creditsMicrosPerUnit === null || minMinor === null || maxMinor === null) return null;
  return { currency, minorPerUnit, creditsMicrosPerUnit, minMinor, maxMinor, presetsMinor: options.presetsMinor, subscribable: options.subscribable };
}

interface PlanCardProps {
  plan: Plan;
  payments: EnabledPayments | null;
  /** On a paid plan through Stripe. */
  subscribed: boolean;
  /** The account's standing: a current plan it may not use says so instead of "This is your plan". */
  standing: Standing['state'];
  onSwitch(): void;
}

function PlanCard({ plan, ...action }: PlanCardProps) {
  const titleId = `plan-${plan.name}`;
  return (
    <article className={`card plan ${plan.current ? 'is-current' : ''}`} aria-labelledby={titleId}>
      <div className="plan-head">
        <h3 id={titleId} className="plan-name">
          {formatPlanName(plan.name)}
        </h3>
        {plan.current ? <span className="badge accent">Current plan</span> : null}
      </div>
      <p className="plan-price">
        {/* The plan may be called Free already: its price says it once, in other words. */}
        {plan.priceMonth === null || plan.priceMonth === 0 ? (
          'No monthly fee'
        ) : (
          <>
            {formatPrice(plan.priceMonth, plan.currency)} <span className="plan-period">per month</span>
          </>
        )}
      </p>
      <p className="plan-credits">
        {plan.creditsMonthMicros === null || plan.creditsMonthMicros === 0
          ? 'No monthly credits included'
          : `${formatCredits(plan.creditsMonthMicros)} credits included every month`}
      </p>
      <PlanLimits plan={plan} />
      <div className="plan-models">
        <p className="label">Models</p>
        <ul className="chips">
          {plan.models.length === 0 ? <li className="muted">None yet</li> : null}
          {plan.models.map((id) => (
            <li key={id}>
              <code>{id}</code>
            </li>
          ))}
        </ul>
      </div>
      <div className="plan-action">
        <PlanAction plan={plan} {...action} />
      </div>
    </article>
  );
}

function PlanAction({ plan, payments, subscribed, standing, onSwitch }: PlanCardProps) {
  const blocked = standing === 'suspended' || standing === 'subscription_required' || standing === 'subscription_lapsed';
  if (plan.current && blocked) {
    if (standing !== 'suspended' && payments?.subscribable.includes(plan.name) === true) {
      return <StripeButton label={`Subscribe to ${formatPlanName(plan.name)}`} path="/payments/subscribe" body={{ tier: plan.name }} primary />;
    }
    return (
      <p className="muted">
        Your plan, but API requests are refused: <ContactOperator />.
      </p>
    );
  }
  if (plan.current) {
    return plan.subscription && payments !== null ? <StripeButton label="Manage subscription" path="/payments/portal" /> : <p className="muted">This is your plan.</p>;
  }
  if (subscribed) return <p className="muted">To change to this plan, first cancel your subscription under Manage subscription.</p>;
  if (plan.selfService) {
    return (
      <button type="button" className="button primary" onClick={onSwitch}>
        Switch to {formatPlanName(plan.name)}
      </button>
    );
  }
  if (payments?.subscribable.includes(plan.name) === true) {
    return <StripeButton label={`Subscribe to ${formatPlanName(plan.name)}`} path="/payments/subscribe" body={{ tier: plan.name }} primary />;
  }
  return (
    <p className="muted">
      To subscribe to this plan, <ContactOperator />.
    </p>
  );
}

function ConfirmSwitch({ plan, onSwitched, onCancel }: { plan: Plan; onSwitched(account: Account): void; onCancel(): void }) {
  async function confirm() {
    const answer = await api<PlanChanged>('/plan', { method: 'POST', body: { tier: plan.name } });
    onSwitched(answer.account);
  }

  return (
    <ConfirmAction
      label={`Switch to ${formatPlanName(plan.name)}`}
      busyLabel="Switching…"
      tone="primary"
      action={confirm}
      onCancel={onCancel}
    >
      <p>
        Your rate limits and the models you can use change at once to those of the {formatPlanName(plan.name)} plan: {formatNumber(plan.rpm)}{' '}
        requests and {formatNumber(plan.tpm)} tokens per minute. Your credit balance stays as it is.
      </p>
    </ConfirmAction>
  );
}

function RedeemCode({ onRedeemed }: { onRedeemed(redemption: Redemption): void }) {
  const [code, setCode] = useState('');
  const [result, setResult] = useState<{ tone: 'success' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setResult(null);
    try {
      const redemption = await api<Redemption>('/redeem', { method: 'POST', body: { code: code.trim() } });
      setCode('');
      setResult({
        tone: 'success',
        text: `${formatCredits(redemption.creditedMicros)} credits were added. Your balance is now ${formatCredits(redemption.balanceMicros)} credits.`,
      });
      onRedeemed(redemption);
    } catch (err) {
      const text =
        err instanceof ApiError && err.status === 429
          ? `Too many attempts. Please try again ${err.retryAfterSec === null ? 'later' : formatWait(err.retryAfterSec)}.`
          : err instanceof Error
            ? err.message
            : String(err);
      setResult({ tone: 'error', text });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby="redeem-title" id="redeem">
      <h2 id="redeem-title" className="card-title">
        Redeem a code
      </h2>
      <form onSubmit={submit} className="form">
        <TextField
          label="Code"
          name="code"
          placeholder="LMG-XXXX-XXXX-XXXX"
          autoComplete="off"
          spellCheck={false}
          autoCapitalize="characters"
          required
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
        {result === null ? null : <Notice tone={result.tone}>{result.text}</Notice>}
        <div>
          <button type="submit" className="button primary" disabled={busy || code.trim() === ''}>
            {busy ? 'Redeeming…' : 'Redeem'}
          </button>
        </div>
      </form>
    </section>
  );
}
