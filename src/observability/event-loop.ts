// How late the event loop runs: every request in the process waits out a stalled turn, so
// its delay is the floor under every tail latency. Node samples it natively
// (monitorEventLoopDelay); the percentiles cover a rolling window of the last one to two
// minutes, so a scrape sees a recent stall and forgets it once it is old.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** The sampling timer's period; fine enough to resolve the 5 ms p99 the bench holds lmgate to. */
const RESOLUTION_MS = 1;
const WINDOW_MS = 60_000;
const NS_PER_SEC = 1e9;

export interface EventLoopDelaySnapshot {
  p50Sec: number;
  p90Sec: number;
  p99Sec: number;
  maxSec: number;
}

/**
 * Two histograms started one window apart, each reset every other window: the one reset
 * longer ago always holds between one and two windows of samples, up to now. (Node's
 * sampling histograms cannot be merged, so one cannot keep the last window aside.)
 */
export class EventLoopDelay {
  private readonly histograms: [IntervalHistogram, IntervalHistogram];
  private rotation: NodeJS.Timeout | undefined;

  constructor(private readonly windowMs: number = WINDOW_MS) {
    this.histograms = [monitorEventLoopDelay({ resolution: RESOLUTION_MS }), monitorEventLoopDelay({ resolution: RESOLUTION_MS })];
  }

  start(): void {
    for (const histogram of this.histograms) histogram.enable();
    this.rotation = setInterval(() => this.rotate(), this.windowMs);
    this.rotation.unref();
  }

  stop(): void {
    clearInterval(this.rotation);
    for (const histogram of this.histograms) histogram.disable();
  }

  /** The window's delay percentiles and maximum, 0 before the first sample. */
  snapshot(): EventLoopDelaySnapshot {
    const histogram = this.histograms[0];
    // A sample is the time between two runs of the timer: the period plus the delay.
    const delaySec = (ns: number): number => (histogram.count === 0 ? 0 : Math.max(0, ns / NS_PER_SEC - RESOLUTION_MS / 1000));
    return {
      p50Sec: delaySec(histogram.percentile(50)),
      p90Sec: delaySec(histogram.percentile(90)),
      p99Sec: delaySec(histogram.percentile(99)),
      maxSec: delaySec(histogram.max),
    };
  }

  /** The older histogram starts over and becomes the newer one. */
  private rotate(): void {
    const [older, newer] = this.histograms;
    older.reset();
    this.histograms[0] = newer;
    this.histograms[1] = older;
  }
}
