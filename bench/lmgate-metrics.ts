// lmgate's /metrics as the benchmarks read it: one sample by its series, exactly as printed
// (name, then labels if any), and the event loop's delay.
import { Agent, request } from 'undici';

export type Samples = (series: string) => number;

export async function scrapeMetrics(lmgateUrl: string): Promise<Samples> {
  // A connection of its own: while wrk ran (spawnSync) this process could not see the
  // server close a pooled one after its keep-alive timeout, and would write into it.
  const agent = new Agent();
  const text = await (await request(`${lmgateUrl}/metrics`, { dispatcher: agent })).body.text().finally(() => agent.close());
  const lines = text.split('\n');
  return (series) => Number(lines.find((line) => line.startsWith(`${series} `))?.slice(series.length + 1));
}

export interface EventLoopDelayMs {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** lmgate's event-loop delay over the last one to two minutes (src/observability/event-loop.ts). */
export async function eventLoopDelay(lmgateUrl: string): Promise<EventLoopDelayMs> {
  const sample = await scrapeMetrics(lmgateUrl);
  const ms = (series: string): number => sample(series) * 1000;
  return {
    p50Ms: ms('lmgate_event_loop_delay_seconds{quantile="0.5"}'),
    p99Ms: ms('lmgate_event_loop_delay_seconds{quantile="0.99"}'),
    maxMs: ms('lmgate_event_loop_delay_max_seconds'),
  };
}
