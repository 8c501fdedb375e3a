// The business at a glance over the last 30 days: requests, tokens, credits spent and sold
// per day, active accounts, top accounts and models, answers by status (requests refused
// before any model included, and in the error rate), upstream health.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { LoadState } from '../components/LoadState';
import { PageHeader } from '../components/PageHeader';
import { creditsColumn, formatCredits, formatDay, formatNumber } from '../format';
import { usePageTitle } from '../page-title';
import { useApiData } from '../use-api-data';
import { adminPath, type Upstreams, type UsageReport } from './admin-api';
import { DayCharts } from './DayCharts';

const DAYS_SHOWN = 14;

export function AdminOverviewPage() {
  usePageTitle('Console');
  const usage = useApiData<UsageReport>(adminPath('/usage'));
  const upstreams = useApiData<Upstreams>(adminPath('/upstreams'));
  const report = usage.data;
  const days = report?.days.slice(-DAYS_SHOWN).reverse() ?? [];
  const spent = creditsColumn(days.map((day) => day.cost_micros));
  const sold = creditsColumn(days.map((day) => day.credits_sold_micros));

  return (
    <>
      <PageHeader title="Overview" description="The last 30 days across every account (UTC days)." />
      {report === undefined ? (
        <LoadState error={usage.error} onRetry={usage.reload} />
      ) : (
        <>
          <Stats report={report} />
          <DayCharts days={report.days} />
          <div className="grid three">
            <TopList title="Top accounts" rows={report.by_account.slice(0, 5).map((row) => ({ id: row.account_id, label: <Link to={`/admin/accounts/${row.account_id}`}>{row.email}</Link>, micros: row.cost_micros, requests: row.requests }))} />
            <TopList title="Top models" rows={report.by_model.slice(0, 5).map((row) => ({ id: row.model, label: <code>{row.model}</code>, micros: row.cost_micros, requests: row.requests }))} />
            <section className="card" aria-labelledby="statuses">
              <h2 id="statuses" className="card-title">
                Answers by status
              </h2>
              {report.by_status.length === 0 ? (
                <p className="muted">No requests yet.</p>
              ) : (
                <ul className="plain-list">
                  {report.by_status.map((row) => (
                    <li key={row.status} data-testid={`status-${row.status}`}>
                      <span className={`badge ${row.status < 400 ? 'success' : 'danger'}`}>{row.status}</span> {formatNumber(row.requests)}
                      {row.refused === 0 ? null : <span className="muted"> ({row.refused === row.requests ? 'all' : formatNumber(row.refused)} refused before any model)</span>}
                    </li>
                  ))}
                </ul>
              )}
            </section>
          </div>
          <section className="card flush" aria-labelledby="per-day">
            <h2 id="per-day" className="card-title padded">
              Per day
            </h2>
            <table className="table stacked">
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col" className="num">Requests</th>
                  <th scope="col" className="num">Tokens</th>
                  <th scope="col" className="num">Credits spent</th>
                  <th scope="col" className="num">Credits sold</th>
                </tr>
              </thead>
              <tbody>
                {days.map((day) => (
                  <tr key={day.date}>
                    <th scope="row" data-label="Day">
                      {formatDay(day.date)}
                    </th>
                    <td data-label="Requests" className="num">
                      {formatNumber(day.requests)}
                    </td>
                    <td data-label="Tokens" className="num">
                      {formatNumber(day.prompt_tokens + day.completion_tokens)}
                    </td>
                    <td data-label="Credits spent" className="num">
                      {spent(day.cost_micros)}
                    </td>
                    <td data-label="Credits sold" className="num">
                      {sold(day.credits_sold_micros)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
      <section className="card flush" aria-labelledby="upstreams">
        <h2 id="upstreams" className="card-title padded">
          Upstream health
        </h2>
        {upstreams.data === undefined ? (
          <LoadState error={upstreams.error} onRetry={upstreams.reload} />
        ) : upstreams.data.deployments.length === 0 ? (
          <p className="muted padded">No upstream deployments are configured (the demo models need none).</p>
        ) : (
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Upstream</th>
                <th scope="col">State</th>
                <th scope="col" className="num">In flight</th>
                <th scope="col" className="num">OK</th>
                <th scope="col" className="num">Failed</th>
                <th scope="col" className="num">First byte (ms)</th>
              </tr>
            </thead>
            <tbody>
              {upstreams.data.deployments.map((d) => (
                <tr key={`${d.model}/${d.deployment}`}>
                  <th scope="row" data-label="Model">{d.model}</th>
                  <td data-label="Upstream">{d.upstream}</td>
                  <td data-label="State">
                    <span className={`badge ${d.state === 'open' ? 'danger' : 'success'}`}>{d.state}</span>
                  </td>
                  <td data-label="In flight" className="num">{formatNumber(d.in_flight)}</td>
                  <td data-label="OK" className="num">{formatNumber(d.ok)}</td>
                  <td data-label="Failed" className="num">{formatNumber(d.failed)}</td>
                  <td data-label="First byte (ms)" className="num">{d.mean_first_byte_ms === null ? '–' : formatNumber(d.mean_first_byte_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

function Stats({ report }: { report: UsageReport }) {
  const sum = (pick: (day: UsageReport['days'][number]) => number) => report.days.reduce((total, day) => total + pick(day), 0);
  // Every answer, refusals included: a refused request failed as surely as a failed one.
  const requests = report.by_status.reduce((total, s) => total + s.requests, 0);
  const failed = report.by_status.filter((s) => s.status >= 400).reduce((total, s) => total + s.requests, 0);
  const stats = [
    { label: 'Requests', value: formatNumber(requests) },
    { label: 'Tokens', value: formatNumber(sum((d) => d.prompt_tokens + d.completion_tokens)) },
    { label: 'Credits spent', value: formatCredits(sum((d) => d.cost_micros)) },
    { label: 'Credits sold', value: formatCredits(sum((d) => d.credits_sold_micros)), note: `${formatCredits(sum((d) => d.credits_redeemed_micros))} from codes, not counted` },
    { label: 'Active accounts', value: formatNumber(report.by_account.length) },
    { label: 'Error rate', value: requests === 0 ? '–' : `${((failed / requests) * 100).toFixed(1)}%`, note: `${formatNumber(failed)} of ${formatNumber(requests)} answers` },
  ] as { label: string; value: string; note?: string }[];
  return (
    <div className="grid stats">
      {stats.map((stat) => (
        <div key={stat.label} className="card stat">
          <p className="stat-label">{stat.label}</p>
          <p className="stat-value" data-testid={`stat-${stat.label.toLowerCase().replace(/ /g, '-')}`}>
            {stat.value}
          </p>
          {stat.note === undefined ? null : <p className="stat-note muted">{stat.note}</p>}
        </div>
      ))}
    </div>
  );
}

function TopList({ title, rows }: { title: string; rows: { id: string; label: ReactNode; micros: number; requests: number }[] }) {
  return (
    <section className="card">
      <h2 className="card-title">{title}</h2>
      {rows.length === 0 ? (
        <p className="muted">No requests yet.</p>
      ) : (
        <ol className="plain-list">
          {rows.map((row) => (
            <li key={row.id}>
              {row.label} · {formatCredits(row.micros)} credits · {formatNumber(row.requests)} requests
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
