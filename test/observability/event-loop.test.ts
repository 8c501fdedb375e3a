// The event loop's delay: scraped from a real app's /metrics, sane when idle, showing a
// blocked loop at p99 and max, and forgetting a stall once its window has passed.
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLoopDelay } from '../../src/observability/event-loop.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Holds the event loop for `ms` at a time, `times` times, letting timers run in between. */
async function blockLoop(ms: number, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    await nextTurn();
  }
}

interface ScrapedDelay {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

async function scrapeDelay(origin: string): Promise<ScrapedDelay> {
  const res = await fetch(`${origin}/metrics`);
  expect(res.status).toBe(200);
  const lines = (await res.text()).split('\n');
  const value = (series: string): number => {
    const line = lines.find((candidate) => candidate.startsWith(`${series} `));
    expect(line, series).toBeDefined();
    return Number(line!.slice(series.length + 1));
  };
  return {
    p50: value('lmgate_event_loop_delay_seconds{quantile="0.5"}'),
    p90: value('lmgate_event_loop_delay_seconds{quantile="0.9"}'),
    p99: value('lmgate_event_loop_delay_seconds{quantile="0.99"}'),
    max: value('lmgate_event_loop_delay_max_seconds'),
  };
}

describe('event-loop delay at /metrics', () => {
  it('an idle app reports its delay by quantile and its maximum, small and in order', async () => {
    t = await startApp();
    // A few scrapes give the sampler some turns of the loop to measure.
    for (let i = 0; i < 5; i++) await scrapeDelay(t.origin);
    const delay = await scrapeDelay(t.origin);
    for (const seconds of Object.values(delay)) expect(Number.isFinite(seconds)).toBe(true);
    expect(delay.p50).toBeGreaterThanOrEqual(0);
    expect(delay.p90).toBeGreaterThanOrEqual(delay.p50);
    expect(delay.p99).toBeGreaterThanOrEqual(delay.p90);
    expect(delay.max).toBeGreaterThanOrEqual(delay.p99);
    expect(delay.max).toBeGreaterThan(0);
    expect(delay.p50).toBeLessThan(0.01);
  });

  it('a loop blocked for 50 ms at a time shows at p99 and max', async () => {
    t = await startApp();
    await blockLoop(50, 10);
    const delay = await scrapeDelay(t.origin);
    expect(delay.p99).toBeGreaterThanOrEqual(0.04);
    expect(delay.max).toBeGreaterThanOrEqual(0.045);
    expect(delay.max).toBeLessThan(1);
  });
});

describe('EventLoopDelay', () => {
  it('forgets a stall two windows after it', async () => {
    // The stalls end well inside the first window, so no rotation falls among them.
    const delay = new EventLoopDelay(500);
    delay.start();
    try {
      await blockLoop(100, 3);
      expect(delay.snapshot().maxSec).toBeGreaterThanOrEqual(0.09);
      expect(delay.snapshot().p99Sec).toBeGreaterThanOrEqual(0.09);
      await sleep(1_250);
      expect(delay.snapshot().maxSec).toBeLessThan(0.09);
    } finally {
      delay.stop();
    }
  });
});
