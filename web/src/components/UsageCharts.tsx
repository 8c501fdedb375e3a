// The usage charts (Recharts): requests, tokens (prompt vs completion) and credits per day,
// and one stacked chart splitting a measure by model or by key.
import { useId, useState, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from 'recharts';
import { niceTicks } from '../chart-ticks';
import { creditsColumn, formatCompact, formatCredits, formatDay, formatNumber } from '../format';
import type { Usage, UsageByKey, UsageDay, UsageTotals } from '../types';

const CHART_HEIGHT = 240;
const SERIES_COLORS = ['#3b4fd8', '#0f9488', '#d97706', '#c2417a', '#7c5cd6', '#2b87c9', '#6b8e23', '#8a5a44'];
const OTHER_COLOR = '#9aa3b2';
/** More series than this become one "Other" band, so the chart stays readable. */
const MAX_SERIES = 6;

const axisProps = { stroke: '#8a93a3', fontSize: 12, tickLine: false } as const;

export function UsageCharts({ days }: { days: UsageDay[] }) {
  const animate = !prefersReducedMotion();
  return (
    <div className="grid two charts">
      <ChartCard title="Requests per day">
        <BarChart responsive width="100%" height={CHART_HEIGHT} data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={false} stroke="#eceef2" />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} minTickGap={24} />
          <YAxis {...countAxis(days.map((day) => day.requests))} {...axisProps} width={44} />
          <Tooltip labelFormatter={dayLabel} formatter={(value) => formatNumber(Number(value))} />
          <Bar dataKey="requests" name="Requests" fill={SERIES_COLORS[0]} radius={[3, 3, 0, 0]} isAnimationActive={animate} />
        </BarChart>
      </ChartCard>
      <ChartCard title="Tokens per day">
        <BarChart responsive width="100%" height={CHART_HEIGHT} data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={false} stroke="#eceef2" />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} minTickGap={24} />
          <YAxis {...countAxis(days.map((day) => day.promptTokens + day.completionTokens))} {...axisProps} width={44} />
          <Tooltip labelFormatter={dayLabel} formatter={(value) => formatNumber(Number(value))} />
          <Legend iconType="circle" iconSize={8} itemSorter={null} />
          <Bar dataKey="promptTokens" name="Prompt" stackId="tokens" fill={SERIES_COLORS[0]} isAnimationActive={animate} />
          <Bar dataKey="completionTokens" name="Completion" stackId="tokens" fill={SERIES_COLORS[1]} radius={[3, 3, 0, 0]} isAnimationActive={animate} />
        </BarChart>
      </ChartCard>
      <ChartCard title="Credits per day" wide>
        <BarChart responsive width="100%" height={CHART_HEIGHT} data={days} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
          <CartesianGrid vertical={false} stroke="#eceef2" />
          <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} minTickGap={24} />
          <YAxis {...creditsAxis(days.map((day) => day.costMicros))} {...axisProps} width={72} />
          <Tooltip labelFormatter={dayLabel} formatter={(value) => `${formatCredits(Number(value))} credits`} />
          <Bar dataKey="costMicros" name="Credits" fill={SERIES_COLORS[2]} radius={[3, 3, 0, 0]} isAnimationActive={animate} />
        </BarChart>
      </ChartCard>
    </div>
  );
}

/** A value axis of counts (requests, tokens) at round steps, up to a few thousand as 1K. */
function countAxis(values: number[]) {
  const ticks = niceTicks(Math.max(0, ...values), 4);
  return { ticks, domain: [0, ticks.at(-1)!], tickFormatter: formatCompact };
}

/**
 * A value axis of credits (integer micros) at round steps, every tick with the same
 * decimals. When everything in the range was free it ends at 0.01: with nothing to scale
 * to it would count micro-credits (0.000001, 0.000002, ...).
 */
function creditsAxis(values: number[]) {
  const ticks = niceTicks(Math.max(0, ...values), 10_000);
  return { ticks, domain: [0, ticks.at(-1)!], tickFormatter: creditsColumn(ticks) };
}

type Grouping = 'model' | 'key';

type Measure = 'requests' | 'tokens' | 'costMicros';
const MEASURES: Record<Measure, { label: string; of(row: UsageTotals): number; format(value: number): string }> = {
  requests: { label: 'Requests', of: (row) => row.requests, format: formatNumber },
  tokens: { label: 'Tokens', of: (row) => row.promptTokens + row.completionTokens, format: formatNumber },
  costMicros: { label: 'Credits', of: (row) => row.costMicros, format: formatCredits },
};

interface Split {
  series: { name: string; color: string; total: number }[];
  rows: Record<string, number | string>[];
}

/** One row per day with a value per series (top MAX_SERIES by total, the rest as "Other"). */
function splitUsage(usage: Usage, grouping: Grouping, measure: Measure): Split {
  const of = MEASURES[measure].of;
  const entries = (grouping === 'model' ? usage.byModel.map((row) => ({ ...row, name: row.model })) : usage.byKey.map((row) => ({ ...row, name: keyLabel(usage, row) })))
    .map((row) => ({ date: row.date, name: row.name, value: of(row) }));
  const totals = new Map<string, number>();
  for (const entry of entries) totals.set(entry.name, (totals.get(entry.name) ?? 0) + entry.value);
  const ranked = [...totals.entries()].filter(([, total]) => total > 0).sort((a, b) => b[1] - a[1]);
  const shown = ranked.slice(0, ranked.length > MAX_SERIES ? MAX_SERIES - 1 : MAX_SERIES);
  const shownNames = new Set(shown.map(([name]) => name));
  const otherTotal = ranked.filter(([name]) => !shownNames.has(name)).reduce((sum, [, total]) => sum + total, 0);
  const series = shown.map(([name, total], index) => ({ name, total, color: SERIES_COLORS[index % SERIES_COLORS.length] ?? OTHER_COLOR }));
  if (otherTotal > 0) series.push({ name: 'Other', total: otherTotal, color: OTHER_COLOR });

  const rows = usage.days.map((day): Record<string, number | string> => ({ date: day.date }));
  const rowByDate = new Map(rows.map((row) => [row.date as string, row]));
  for (const entry of entries) {
    const row = rowByDate.get(entry.date);
    if (row === undefined || entry.value === 0) continue;
    const name = shownNames.has(entry.name) ? entry.name : 'Other';
    row[name] = ((row[name] as number | undefined) ?? 0) + entry.value;
  }
  return { series, rows };
}

/** A key's name, made unique with the end of its id when two keys share a name. */
function keyLabel(usage: Usage, row: UsageByKey): string {
  // The server sends '' for a key it cannot find (a key's own name is never empty).
  const name = row.keyName || 'Unknown key';
  const shared = usage.byKey.some((other) => other.keyId !== row.keyId && (other.keyName || 'Unknown key') === name);
  return shared ? `${name} (…${row.keyId.slice(-4)})` : name;
}

export function UsageBreakdown({ usage }: { usage: Usage }) {
  const [grouping, setGrouping] = useState<Grouping>('model');
  const [measure, setMeasure] = useState<Measure>('requests');
  const groupingId = useId();
  const measureId = useId();
  const { series, rows } = splitUsage(usage, grouping, measure);
  const { label, format } = MEASURES[measure];
  const animate = !prefersReducedMotion();
  const groupLabel = grouping === 'model' ? 'Model' : 'Key';

  return (
    <section className="card" aria-labelledby="breakdown-title">
      <div className="card-head inline">
        <h2 id="breakdown-title" className="card-title">
          {label} by {grouping}
        </h2>
        <div className="selects">
          <div className="field compact">
            <label htmlFor={groupingId}>Split by</label>
            <select id={groupingId} value={grouping} onChange={(e) => setGrouping(e.target.value as Grouping)}>
              <option value="model">Model</option>
              <option value="key">API key</option>
            </select>
          </div>
          <div className="field compact">
            <label htmlFor={measureId}>Show</label>
            <select id={measureId} value={measure} onChange={(e) => setMeasure(e.target.value as Measure)}>
              <option value="requests">Requests</option>
              <option value="tokens">Tokens</option>
              <option value="costMicros">Credits</option>
            </select>
          </div>
        </div>
      </div>
      {series.length === 0 ? (
        <p className="muted empty-row">Nothing to show for this range yet.</p>
      ) : (
        <div className="breakdown">
          <figure className="chart" aria-label={`${label} per day by ${grouping}`}>
            <BarChart responsive width="100%" height={CHART_HEIGHT} data={rows} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
              <CartesianGrid vertical={false} stroke="#eceef2" />
              <XAxis dataKey="date" tickFormatter={formatDay} {...axisProps} minTickGap={24} />
              <YAxis {...(measure === 'costMicros' ? creditsAxis : countAxis)(dayTotals(rows))} {...axisProps} width={measure === 'costMicros' ? 72 : 44} />
              <Tooltip labelFormatter={dayLabel} formatter={(value) => format(Number(value))} />
              <Legend iconType="circle" iconSize={8} itemSorter={null} />
              {series.map((item) => (
                <Bar key={item.name} dataKey={item.name} name={item.name} stackId="split" fill={item.color} isAnimationActive={animate} />
              ))}
            </BarChart>
          </figure>
          <table className="table compact-table">
            <caption className="visually-hidden">
              {label} by {grouping} over the range
            </caption>
            <thead>
              <tr>
                <th scope="col">{groupLabel}</th>
                <th scope="col" className="num">
                  {label}
                </th>
              </tr>
            </thead>
            <tbody>
              {series.map((item) => (
                <tr key={item.name}>
                  <th scope="row">
                    <svg className="swatch" viewBox="0 0 10 10" aria-hidden="true" focusable="false">
                      <circle cx="5" cy="5" r="5" fill={item.color} />
                    </svg>
                    {item.name}
                  </th>
                  <td className="num">{format(item.total)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** Each day's stacked height: the sum of its series. */
function dayTotals(rows: Split['rows']): number[] {
  return rows.map((row) => Object.values(row).reduce<number>((sum, value) => sum + (typeof value === 'number' ? value : 0), 0));
}

function ChartCard({ title, wide = false, children }: { title: string; wide?: boolean; children: ReactNode }) {
  return (
    <figure className={`card chart ${wide ? 'wide' : ''}`}>
      <figcaption className="card-title">{title}</figcaption>
      {children}
    </figure>
  );
}

/** Bars grow in, unless the customer asked their system for less motion. */
function prefersReducedMotion(): boolean {
  return window.matchMedia('(prefers-reduced-motion: reduce)').matches;
}

function dayLabel(label: unknown): string {
  return typeof label === 'string' ? formatDay(label) : String(label);
}
