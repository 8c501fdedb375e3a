// The dashboard's usage charts (loaded on demand, like its Usage page: the chart library is
// most of the bundle) over the admin API's days.
import { lazy, Suspense } from 'react';
import type { UsageReport } from './admin-api';

const UsageCharts = lazy(() => import('../components/UsageCharts').then((module) => ({ default: module.UsageCharts })));

export function DayCharts({ days }: { days: UsageReport['days'] }) {
  const shown = days.map((day) => ({
    date: day.date,
    requests: day.requests,
    promptTokens: day.prompt_tokens,
    completionTokens: day.completion_tokens,
    costMicros: day.cost_micros,
  }));
  return (
    <Suspense fallback={<p className="muted loading">Loading charts…</p>}>
      <UsageCharts days={shown} />
    </Suspense>
  );
}
