// One account: balance, reserved credits, tier, status, keys with their limits, usage, its
// request log (refusals included) and ledger, each paged, and the
// operator's actions on it, each confirmed in a dialog: grant or adjust credits with a
// reason, suspend or reactivate, change tier, revoke a key.
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { api, ApiError } from '../api';
import { ConfirmAction } from '../components/ConfirmAction';
import { Dialog } from '../components/Dialog';
import { LoadState } from '../components/LoadState';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { TextField } from '../components/TextField';
import { formatCredits, formatDate, formatDateTime, formatMultiplier, formatNumber, formatPlanName } from '../format';
import { AccountLedger } from './AccountLedger';
import { AccountRequestLog } from './AccountRequestLog';
import { KeyLimits } from './KeyLimits';
import { AccountTier } from './AccountTier';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type AccountDetail, type AdminAccount, type AdminKey, type Catalog, type KeyList, type UsageReport } from './admin-api';
import { creditsInputToMicros } from '../credit-input';
import { DayCharts } from './DayCharts';

type Action =
  | { kind: 'none' }
  | { kind: 'credits'; mode: 'grant' | 'adjust' }
  | { kind: 'status' }
  | { kind: 'tier' }
  | { kind: 'prices' }
  | { kind: 'revoke'; key: AdminKey };

export function AdminAccountPage() {
  const { id = '' } = useParams();
  const base = adminPath(`/accounts/${encodeURIComponent(id)}`);
  const detail = useApiData<AccountDetail>(base);
  const keys = useApiData<KeyList>(`${base}/keys`);
  // Bumped by each action, so that the ledger is read again.
  const [changes, setChanges] = useState(0);
  const usage = useApiData<UsageReport>(adminPath(`/usage?account_id=${encodeURIComponent(id)}`));
  const [action, setAction] = useState<Action>({ kind: 'none' });
  const [notice, setNotice] = useState<string | null>(null);
  // The admin API's warning after a tier change that leaves the account refused.
  const [tierWarning, setTierWarning] = useState<string | null>(null);
  usePageTitle(detail.data?.account.email ?? 'Account');

  function done(message: string) {
    setAction({ kind: 'none' });
    setNotice(message);
    detail.reload();
    keys.reload();
    setChanges((n) => n + 1);
  }

  if (detail.data === undefined) return <LoadState error={detail.error} onRetry={detail.reload} />;
  const { account, reserved_micros: reservedMicros } = detail.data;
  const suspended = account.status === 'suspended';
  const close = () => setAction({ kind: 'none' });

  return (
    <>
      <p>
        <Link to="/admin/accounts">← Accounts</Link>
      </p>
      <PageHeader
        title={account.email}
        description={`${account.name ?? 'No name'} · ${account.id} · created ${formatDate(account.created_at)}`}
        actions={
          <>
            <button type="button" className="button primary" onClick={() => setAction({ kind: 'credits', mode: 'grant' })}>
              Grant credits
            </button>
            <button type="button" className="button" onClick={() => setAction({ kind: 'credits', mode: 'adjust' })}>
              Adjust
            </button>
            <button type="button" className="button" onClick={() => setAction({ kind: 'tier' })}>
              Change tier
            </button>
            <button type="button" className="button" onClick={() => setAction({ kind: 'prices' })}>
              Prices
            </button>
            <button type="button" className={`button ${suspended ? 'primary' : 'danger-outline'}`} onClick={() => setAction({ kind: 'status' })}>
              {suspended ? 'Reactivate' : 'Suspend'}
            </button>
          </>
        }
      />
      {notice === null ? null : <Notice tone="success">{notice}</Notice>}
      {tierWarning === null ? null : <Notice tone="warning">{tierWarning}</Notice>}
      <div className="grid stats">
        <div className="card stat">
          <p className="stat-label">Balance</p>
          <p className="stat-value" data-testid="balance">
            {formatCredits(account.balance_micros)}
          </p>
        </div>
        <div className="card stat">
          <p className="stat-label">Reserved</p>
          <p className="stat-value">{formatCredits(reservedMicros)}</p>
        </div>
        <div className="card stat">
          <p className="stat-label">Tier</p>
          <p className="stat-value">
            <AccountTier account={account} />
          </p>
        </div>
        <div className="card stat">
          <p className="stat-label">Prices</p>
          <p className="stat-value" data-testid="price-multiplier">
            {formatMultiplier(account.price_multiplier_ppm)}
          </p>
        </div>
        <div className="card stat">
          <p className="stat-label">Status</p>
          <p className="stat-value" data-testid="status">
            {formatPlanName(account.status)}
          </p>
        </div>
        <div className="card stat">
          <p className="stat-label">Requests, 30 days (refused included)</p>
          <p className="stat-value">{usage.data === undefined ? '…' : formatNumber(usage.data.by_status.reduce((n, s) => n + s.requests, 0))}</p>
        </div>
      </div>

      {usage.data === undefined ? null : <DayCharts days={usage.data.days} />}

      <section className="card flush" aria-labelledby="keys-title">
        <h2 id="keys-title" className="card-title padded">
          API keys
        </h2>
        {keys.data === undefined ? (
          <LoadState error={keys.error} onRetry={keys.reload} />
        ) : (
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Limits</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.keys.map((key) => (
                <tr key={key.id} className={key.status === 'revoked' ? 'is-revoked' : undefined}>
                  <th scope="row" data-label="Name" className="key-name">
                    {key.name}
                  </th>
                  <td data-label="Key">
                    <code className="key-mask">{key.key}</code>
                  </td>
                  <td data-label="Limits">
                    <KeyLimits controls={key.controls} />
                  </td>
                  <td data-label="Last used">{key.last_used_at === null ? <span className="muted">Never</span> : formatDateTime(key.last_used_at)}</td>
                  <td data-label="Status">
                    <span className={`badge ${key.status === 'active' ? 'success' : 'neutral'}`}>{key.status}</span>
                  </td>
                  <td className="actions">
                    {key.status === 'active' ? (
                      <button type="button" className="button danger-outline small" onClick={() => setAction({ kind: 'revoke', key })}>
                        Revoke<span className="visually-hidden"> {key.name}</span>
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <AccountRequestLog base={base} />

      <AccountLedger base={base} version={changes} />

      <Dialog open={action.kind === 'credits'} title={action.kind === 'credits' && action.mode === 'adjust' ? 'Adjust credits' : 'Grant credits'} onClose={close}>
        {action.kind === 'credits' ? (
          <CreditsForm
            mode={action.mode}
            email={account.email}
            onCancel={close}
            onDone={(micros) => done(`${action.mode === 'grant' ? 'Granted' : 'Adjusted by'} ${formatCredits(micros)} credits.`)}
            path={`${base}/credits/${action.mode}`}
          />
        ) : null}
      </Dialog>
      <Dialog open={action.kind === 'status'} title={suspended ? 'Reactivate this account?' : 'Suspend this account?'} tone={suspended ? 'default' : 'danger'} onClose={close}>
        {action.kind === 'status' ? (
          <ConfirmAction
            label={suspended ? 'Reactivate' : 'Suspend account'}
            busyLabel={suspended ? 'Reactivating…' : 'Suspending…'}
            tone={suspended ? 'primary' : 'danger'}
            onCancel={close}
            action={async () => {
              await api(`${base}/${suspended ? 'reactivate' : 'suspend'}`, { method: 'POST' });
              done(suspended ? 'The account is active again.' : 'The account is suspended: its keys get 403 from now on.');
            }}
          >
            <p>
              {suspended ? (
                <>
                  <strong>{account.email}</strong> can use the API again with its keys.
                </>
              ) : (
                <>
                  Every request with <strong>{account.email}</strong>’s keys is refused (403) at once, on every instance, until it is reactivated.
                </>
              )}
            </p>
          </ConfirmAction>
        ) : null}
      </Dialog>
      <Dialog open={action.kind === 'prices'} title="Price multiplier" onClose={close}>
        {action.kind === 'prices' ? (
          <MultiplierForm current={account.price_multiplier_ppm} path={`${base}/price-multiplier`} onCancel={close} onDone={(ppm) => done(`This account now pays ${formatMultiplier(ppm)} the prices.`)} />
        ) : null}
      </Dialog>
      <Dialog open={action.kind === 'tier'} title="Change tier" onClose={close}>
        {action.kind === 'tier' ? (
          <TierForm
            account={account}
            path={`${base}/tier`}
            onCancel={close}
            onDone={(tier, warning) => {
              done(`The tier is now ${formatPlanName(tier)}.`);
              setTierWarning(warning);
            }}
          />
        ) : null}
      </Dialog>
      <Dialog open={action.kind === 'revoke'} title="Revoke this key?" tone="danger" onClose={close}>
        {action.kind === 'revoke' ? (
          <ConfirmAction
            label="Revoke key"
            busyLabel="Revoking…"
            tone="danger"
            onCancel={close}
            action={async () => {
              await api(adminPath(`/keys/${encodeURIComponent(action.key.id)}/revoke`), { method: 'POST' });
              done(`The key “${action.key.name}” was revoked.`);
            }}
          >
            <p>
              <strong>{action.key.name}</strong> (<code>{action.key.key}</code>) stops working at once: requests with it get 401. This cannot be undone.
            </p>
          </ConfirmAction>
        ) : null}
      </Dialog>
    </>
  );
}

function CreditsForm({ mode, email, path, onDone, onCancel }: { mode: 'grant' | 'adjust'; email: string; path: string; onDone(micros: number): void; onCancel(): void }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const micros = creditsInputToMicros(amount, { signed: mode === 'adjust' });

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (micros === null) return;
    setBusy(true);
    setError(undefined);
    try {
      await api(path, { method: 'POST', body: { amount_micros: micros, reason: reason.trim() } });
      onDone(micros);
    } catch (err) {
      setError(err instanceof ApiError ? err : new ApiError(0, String(err)));
      setBusy(false);
    }
  }

  return (
    <form onSubmit={submit} className="form">
      <p>
        For <strong>{email}</strong>. The change is kept in the account’s ledger and the audit log.
      </p>
      <TextField
        label="Credits"
        hint={mode === 'adjust' ? 'Negative takes credits away, never below zero.' : 'Up to 6 decimals.'}
        inputMode="decimal"
        required
        value={amount}
        onChange={(e) => setAmount(e.target.value)}
        error={amount !== '' && micros === null ? 'Enter an amount of credits, such as 5 or 2.5.' : error?.fields.amount_micros}
      />
      <TextField label="Reason" required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} error={error?.fields.reason} />
      {error !== undefined && Object.keys(error.fields).length === 0 ? <Notice tone="error">{error.message}</Notice> : null}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button primary" disabled={busy || micros === null || reason.trim() === ''}>
          {busy ? 'Saving…' : micros === null ? (mode === 'grant' ? 'Grant' : 'Adjust') : `${mode === 'grant' ? 'Grant' : 'Adjust by'} ${formatCredits(micros)} credits`}
        </button>
      </div>
    </form>
  );
}

/** A discount or a markup on every price for this account, beside its tier's: 0.9 is 10 % off, 1.2 is 20 % more. */
function MultiplierForm({ current, path, onDone, onCancel }: { current: number; path: string; onDone(ppm: number): void; onCancel(): void }) {
  const [text, setText] = useState(String(current / 1_000_000));
  const ppm = /^\d+(\.\d{1,6})?$/.test(text.trim()) ? Math.round(Number(text.trim()) * 1_000_000) : null;
  const valid = ppm !== null && ppm >= 1 && ppm <= 1_000_000_000;
  return (
    <ConfirmAction
      label={valid ? `Set ${formatMultiplier(ppm)}` : 'Set'}
      busyLabel="Saving…"
      tone="primary"
      disabled={!valid}
      onCancel={onCancel}
      action={async () => {
        await api(path, { method: 'POST', body: { price_multiplier_ppm: ppm } });
        onDone(ppm!);
      }}
    >
      <div className="field">
        <label htmlFor="multiplier-input">Multiplier</label>
        <input id="multiplier-input" inputMode="decimal" value={text} onChange={(e) => setText(e.target.value)} aria-describedby="multiplier-help" />
        <p id="multiplier-help" className="field-help muted">
          Every price × this for this account, beside its tier&apos;s: 1 is the configured prices, 0.9 is 10 % off, 1.2 is 20 % more.
        </p>
      </div>
    </ConfirmAction>
  );
}

/** The tier, and complimentary (without the subscription it needs, until a date or not) when the account has none. */
function TierForm({ account, path, onDone, onCancel }: { account: AdminAccount; path: string; onDone(tier: string, warning: string | null): void; onCancel(): void }) {
  const catalog = useApiData<Catalog>(adminPath('/catalog'));
  const [tier, setTier] = useState(account.tier);
  const [comp, setComp] = useState(false);
  const [compUntil, setCompUntil] = useState('');
  if (catalog.data === undefined) return <LoadState error={catalog.error} onRetry={catalog.reload} />;
  const needsSubscription = catalog.data.tiers.some((t) => t.name === tier && t.subscription) && account.subscription_status !== 'active';
  return (
    <ConfirmAction
      label="Change tier"
      busyLabel="Changing…"
      tone="primary"
      onCancel={onCancel}
      action={async () => {
        const body = comp && needsSubscription ? { tier, comp: true, ...(compUntil === '' ? {} : { comp_until: compUntil }) } : { tier };
        const changed = await api<{ warning: string | null }>(path, { method: 'POST', body });
        onDone(tier, changed.warning);
      }}
    >
      <div className="field">
        <label htmlFor="tier-select">Tier</label>
        <select id="tier-select" value={tier} onChange={(e) => setTier(e.target.value)}>
          {catalog.data.tiers.map((t) => (
            <option key={t.name} value={t.name}>
              {formatPlanName(t.name)} ({formatNumber(t.rpm)} requests/min{t.subscription ? ', needs a subscription' : ''})
            </option>
          ))}
        </select>
      </div>
      {needsSubscription ? (
        <>
          <Notice tone={comp ? 'info' : 'warning'}>
            {formatPlanName(tier)} needs a subscription this account does not have: unless it is complimentary, every API request is refused (403).
          </Notice>
          <label className="checkbox">
            <input type="checkbox" checked={comp} onChange={(e) => setComp(e.target.checked)} /> Complimentary: no subscription needed
          </label>
          {comp ? (
            <div className="field">
              <label htmlFor="comp-until">Until (optional, through that day, UTC)</label>
              <input id="comp-until" type="date" value={compUntil} onChange={(e) => setCompUntil(e.target.value)} />
            </div>
          ) : null}
        </>
      ) : null}
    </ConfirmAction>
  );
}
