// Usage over a range of days: totals, charts, the split by model or key, recent requests
// and a CSV export. The range lives in the address (?from&to) so it can be shared.
import type { ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { LoadState } from '../components/LoadState';
import { MemberFilter } from '../components/MemberFilter';
import { Notice } from '../components/Notice';
import { PageHeader } from '../components/PageHeader';
import { UsageBreakdown, UsageCharts } from '../components/UsageCharts';
import { TokenDetails } from '../components/TokenDetails';
import { creditsColumn, formatCredits, formatDateTime, formatNumber } from '../format';
import { usePageTitle } from '../page-title';
import type { Usage, UsageRecord } from '../types';
import { daysIn, isDay, lastDays, PRESET_DAYS, rangeProblem, todayUtc, type DayRange } from '../usage-range';
import { useApiData } from '../use-api-data';

const DEFAULT_DAYS = 30;
/** The API lists at most this many recent requests. */
const RECENT_LIMIT = 100;

export function UsagePage() {
  usePageTitle('Usage');
  const [params, setParams] = useSearchParams();
  const fallback = lastDays(DEFAULT_DAYS);
  const from = params.get('from');
  const to = params.get('to');
  const range: DayRange = { from: isDay(from) ? from : fallback.from, to: isDay(to) ? to : fallback.to };
  const problem = rangeProblem(range);
  // In an organisation, one member's usage (the server shows a `member` only their own).
  const member = params.get('member') ?? '';
  const query = `from=${range.from}&to=${range.to}${member === '' ? '' : `&member=${encodeURIComponent(member)}`}`;

  function choose(next: DayRange, nextMember = member) {
    setParams({ from: next.from, to: next.to, ...(nextMember === '' ? {} : { member: nextMember }) }, { replace: true });
  }

  return (
    <>
      <PageHeader
        title="Usage"
        description="Requests, tokens and credits per day (UTC)."
        actions={
          problem === null ? (
            <a className="button" href={`/api/dashboard/usage.csv?${query}`} download>
              Export CSV
            </a>
          ) : undefined
        }
      />
      <RangePicker range={range} onChange={choose}>
        <MemberFilter id="usage-member" value={member} onChange={(memberId) => choose(range, memberId)} />
      </RangePicker>
      {problem === null ? <UsageReport query={query} /> : <Notice tone="error">{problem}</Notice>}
    </>
  );
}

function RangePicker({ range, onChange, children }: { range: DayRange; onChange(range: DayRange): void; children?: ReactNode }) {
  const today = todayUtc();
  return (
    <form className="card range" aria-label="Date range" onSubmit={(event) => event.preventDefault()}>
      <div className="range-dates">
        <div className="field">
          <label htmlFor="usage-from">From</label>
          <input id="usage-from" type="date" value={range.from} max={today} onChange={(e) => onChange({ ...range, from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="usage-to">To</label>
          <input id="usage-to" type="date" value={range.to} max={today} onChange={(e) => onChange({ ...range, to: e.target.value })} />
        </div>
        {children}
      </div>
      <div className="range-presets" role="group" aria-label="Presets">
        <span className="range-presets-label" aria-hidden="true">
          Last
        </span>
        {PRESET_DAYS.map((days) => {
          const preset = lastDays(days, today);
          const active = preset.from === range.from && preset.to === range.to;
          return (
            <button key={days} type="button" className={`button small ${active ? 'is-active' : ''}`} aria-pressed={active} onClick={() => onChange(preset)}>
              <span className="wide-only">Last </span>
              {days} days
            </button>
          );
        })}
      </div>
    </form>
  );
}

function UsageReport({ query }: { query: string }) {
  const usage = useApiData<Usage>(`/usage?${query}`);
  const data = usage.data;
  if (data === undefined) return <LoadState error={usage.error} onRetry={usage.reload} />;
  const totals = data.days.reduce(
    (sum, day) => ({
      requests: sum.requests + day.requests,
      tokens: sum.tokens + day.promptTokens + day.completionTokens,
      costMicros: sum.costMicros + day.costMicros,
    }),
    { requests: 0, tokens: 0, costMicros: 0 },
  );

  return (
    <>
      <section className="grid three stats" aria-label="Totals for the range">
        <Stat label="Requests" value={formatNumber(totals.requests)} />
        <Stat label="Tokens" value={formatNumber(totals.tokens)} />
        <Stat label="Credits spent" value={formatCredits(totals.costMicros)} />
      </section>
      {totals.requests === 0 ? (
        <div className="card empty">
          <h2 className="card-title">No requests in these {daysIn(data)} days</h2>
          <p className="muted">
            Once your applications call the API with one of your <Link to="/keys">keys</Link>, their requests, tokens and credits show
            here. The <Link to="/">overview</Link> has examples to start from.
          </p>
        </div>
      ) : (
        <>
          <UsageCharts days={data.days} />
          <UsageBreakdown usage={data} />
          <RecentRequests records={data.recent} days={daysIn(data)} />
        </>
      )}
    </>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="card stat">
      <p className="stat-label">{label}</p>
      <p className="stat-value">{value}</p>
    </div>
  );
}

function RecentRequests({ records, days }: { records: UsageRecord[]; days: number }) {
  const credits = creditsColumn(records.map((record) => record.costMicros));
  return (
    <section className="card flush" aria-labelledby="recent-title">
      <div className="card-head">
        <h2 id="recent-title" className="card-title">
          Recent requests
        </h2>
        <p className="muted">
          {records.length === RECENT_LIMIT ? `The latest ${RECENT_LIMIT} requests` : 'Requests'} in these {days} days, newest first.
        </p>
      </div>
      {records.length === 0 ? (
        <p className="empty-row muted">No requests in this range yet.</p>
      ) : (
        <table className="table stacked" data-testid="recent-requests">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Model</th>
              <th scope="col">Key</th>
              <th scope="col" className="num">
                Prompt
              </th>
              <th scope="col" className="num">
                Completion
              </th>
              <th scope="col" className="num">
                Credits
              </th>
              <th scope="col" className="num">
                Latency
              </th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {records.map((record) => (
              <tr key={record.id}>
                <td data-label="Time">{formatDateTime(record.createdAt)}</td>
                <td data-label="Model">
                  <code>{record.model}</code>
                </td>
                <td data-label="Key">{record.keyName || <span className="muted">Unknown key</span>}</td>
                <td data-label="Prompt" className="num">
                  {formatNumber(record.promptTokens)}
                </td>
                <td data-label="Completion" className="num">
                  {formatNumber(record.completionTokens)}
                  <TokenDetails {...record} />
                </td>
                <td data-label="Credits" className="num">
                  {credits(record.costMicros)}
                </td>
                <td data-label="Latency" className="num">
                  {formatNumber(record.latencyMs)} ms
                </td>
                <td data-label="Status">
                  <span className={`badge ${record.status < 400 ? 'success' : 'danger'}`}>{record.status}</span>
                  {record.streamed ? <span className="badge neutral">stream</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
