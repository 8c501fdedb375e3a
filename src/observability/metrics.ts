// Prometheus metrics (prom-client), one registry per app. Per upstream deployment: attempts
// by outcome, time to first byte, requests in flight and circuit state; for usage records,
// the time each batch took to write, the records written and the records waiting; and the
// event loop's delay (event-loop.ts). The request path only adds to plain numbers (a
// prom-client observation hashes its labels each time); everything becomes Prometheus
// samples when scraped.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric, type MetricValueWithName } from 'prom-client';
import type { UsageWriteObserver } from '../billing/usage-writer.js';
import type { EventLoopDelay } from './event-loop.js';
import type { CappedCharge } from '../store/store.js';
import type { AttemptOutcome, Deployment, DeploymentObserver } from '../models/upstream/deployment.js';

const DEPLOYMENT_LABELS = ['model', 'deployment', 'upstream'] as const;
const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;
const FIRST_BYTE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// A usage batch on SQLite blocks the event loop while it is written: its tail is the stall.
const USAGE_WRITE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** One deployment's attempts and first-byte latencies since the start. */
class Tally {
  readonly attempts = new Map<AttemptOutcome, number>();
  /** Observations per bucket of FIRST_BYTE_BUCKETS, the last one for +Inf; not cumulative. */
  readonly firstByteBuckets: number[] = new Array<number>(FIRST_BYTE_BUCKETS.length + 1).fill(0);
  firstByteSum = 0;
  firstByteCount = 0;

  observeFirstByte(seconds: number): void {
    let bucket = 0;
    while (bucket < FIRST_BYTE_BUCKETS.length && seconds > FIRST_BYTE_BUCKETS[bucket]!) bucket++;
    this.firstByteBuckets[bucket]!++;
    this.firstByteSum += seconds;
    this.firstByteCount++;
  }
}

export class Metrics implements DeploymentObserver, UsageWriteObserver {
  readonly registry = new Registry();
  private readonly tallies = new Map<Deployment, Tally>();
  private usageQueue: () => number = () => 0;
  private readonly usageWrites = new Histogram({
    name: 'lmgate_usage_write_seconds',
    help: 'Time the store took to write one batch of usage records with their ledger entries.',
    buckets: USAGE_WRITE_BUCKETS,
    registers: [this.registry],
  });
  private readonly usageRecords = new Counter({
    name: 'lmgate_usage_records_written_total',
    help: 'Usage records in batches the store has committed.',
    registers: [this.registry],
  });
  private readonly clientsGone = new Counter({
    name: 'lmgate_clients_gone_total',
    help: 'Requests whose client closed the connection before lmgate had read them (a body cut off).',
    registers: [this.registry],
  });
  private readonly chargesCapped = new Counter({
    name: 'lmgate_charges_capped_total',
    help: 'Usage charges the balance could not cover in full, cut to what was left (should stay 0).',
    registers: [this.registry],
  });
  private readonly uncollectedMicros = new Counter({
    name: 'lmgate_charges_capped_micros_total',
    help: 'Micro-credits of usage not charged because the balance was exhausted.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'lmgate_' });
    const tallies = this.tallies;
    // Every deployment watched or attempted has a tally: the gauges list the same ones.
    const deployments = (): Iterable<Deployment> => tallies.keys();
    new Counter({
      name: 'lmgate_upstream_attempts_total',
      help: 'Requests sent to an upstream deployment, by outcome (ok, rejected = upstream 4xx relayed, unreachable, busy, bad_answer, timeout, aborted = client gone).',
      labelNames: [...DEPLOYMENT_LABELS, 'outcome'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [deployment, tally] of tallies) {
          for (const [outcome, count] of tally.attempts) this.inc({ ...labelsOf(deployment), outcome }, count);
        }
      },
    });
    this.registry.registerMetric(firstByteHistogram(tallies));
    const metrics = this;
    new Gauge({
      name: 'lmgate_usage_queue_records',
      help: 'Settled usage records waiting for the store.',
      registers: [this.registry],
      collect() {
        this.set(metrics.usageQueue());
      },
    });
    new Gauge({
      name: 'lmgate_upstream_in_flight',
      help: 'Requests in flight to an upstream deployment.',
      labelNames: DEPLOYMENT_LABELS,
      registers: [this.registry],
      collect() {
        for (const deployment of deployments()) this.set(labelsOf(deployment), deployment.inFlight);
      },
    });
    new Gauge({
      name: 'lmgate_upstream_healthy',
      help: "1 while a deployment's circuit is closed, 0 while it cools down or waits for its probe.",
      labelNames: DEPLOYMENT_LABELS,
      registers: [this.registry],
      collect() {
        for (const deployment of deployments()) this.set(labelsOf(deployment), deployment.breaker.state === 'closed' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'lmgate_upstream_circuit_state',
      help: "A deployment's circuit breaker: 1 for its current state.",
      labelNames: [...DEPLOYMENT_LABELS, 'state'],
      registers: [this.registry],
      collect() {
        for (const deployment of deployments()) {
          const current = deployment.breaker.state;
          for (const state of CIRCUIT_STATES) this.set({ ...labelsOf(deployment), state }, state === current ? 1 : 0);
        }
      },
    });
  }

  /** Only the lmgate_upstream_* families' text, which upstream-health.ts reads: the console's Overview asks for it on every visit, and the default metrics cost more to render. */
  async upstreamText(): Promise<string> {
    const names = this.registry.getMetricsAsArray().map((metric) => metric.name).filter((name) => name.startsWith('lmgate_upstream_'));
    const texts = await Promise.all(names.map((name) => this.registry.getSingleMetricAsString(name)));
    return texts.join('\n');
  }

  /**
   * The mode in force, and in shared mode whether Redis answers and how many settlements
   * wait for it (kept through an outage, retried when it is back).
   */
  watchMode(shared: (() => { redisUp: boolean; unsettled: number }) | undefined): void {
    new Gauge({
      name: 'lmgate_mode',
      help: 'The mode in force: 1 for embedded (state in this process) or shared (state in Redis).',
      labelNames: ['mode'],
      registers: [this.registry],
      collect() {
        this.set({ mode: 'embedded' }, shared ? 0 : 1);
        this.set({ mode: 'shared' }, shared ? 1 : 0);
      },
    });
    if (!shared) return;
    new Gauge({
      name: 'lmgate_redis_up',
      help: "1 while this instance's Redis connection is ready; 0 while metered requests are refused with 503.",
      registers: [this.registry],
      collect() {
        this.set(shared().redisUp ? 1 : 0);
      },
    });
    new Gauge({
      name: 'lmgate_redis_unsettled_settlements',
      help: 'Settled requests whose charge waits for Redis to come back.',
      registers: [this.registry],
      collect() {
        this.set(shared().unsettled);
      },
    });
  }

  /** lmgate_event_loop_delay_seconds by quantile, and its maximum, over delay's window. */
  watchEventLoop(delay: EventLoopDelay): void {
    const help = 'How late the event loop ran a timer due every millisecond, over the last one to two minutes';
    new Gauge({
      name: 'lmgate_event_loop_delay_seconds',
      help: `${help}, by quantile.`,
      labelNames: ['quantile'],
      registers: [this.registry],
      collect() {
        const { p50Sec, p90Sec, p99Sec } = delay.snapshot();
        this.set({ quantile: '0.5' }, p50Sec);
        this.set({ quantile: '0.9' }, p90Sec);
        this.set({ quantile: '0.99' }, p99Sec);
      },
    });
    new Gauge({
      name: 'lmgate_event_loop_delay_max_seconds',
      help: `${help}: the longest.`,
      registers: [this.registry],
      collect() {
        this.set(delay.snapshot().maxSec);
      },
    });
  }

  /** Makes a model's deployments visible (with zeros) before their first request. */
  watch(deployments: readonly Deployment[]): void {
    for (const deployment of deployments) this.tallyOf(deployment);
  }

  attemptEnded(deployment: Deployment, outcome: AttemptOutcome, firstByteSec: number | undefined): void {
    const tally = this.tallyOf(deployment);
    tally.attempts.set(outcome, (tally.attempts.get(outcome) ?? 0) + 1);
    if (firstByteSec !== undefined) tally.observeFirstByte(firstByteSec);
  }

  /** The usage write thread's CPU, read at scrape time; no series where there is no such figure. */
  watchUsageThread(cpuSeconds: () => number | undefined): void {
    new Counter({
      name: 'lmgate_usage_write_thread_cpu_seconds_total',
      help: "CPU time SQLite's usage write thread has used (its own, unlike the batch times above).",
      registers: [this.registry],
      collect() {
        const seconds = cpuSeconds();
        if (seconds === undefined) return;
        this.reset();
        this.inc(seconds);
      },
    });
  }

  /** Where the number of usage records waiting for the store is read at scrape time. */
  watchUsageQueue(pending: () => number): void {
    this.usageQueue = pending;
  }

  batchWritten(records: number, seconds: number): void {
    this.usageWrites.observe(seconds);
    this.usageRecords.inc(records);
  }

  clientGone(): void {
    this.clientsGone.inc();
  }

  chargeCapped(charge: CappedCharge): void {
    this.chargesCapped.inc();
    this.uncollectedMicros.inc(charge.costMicros - charge.chargedMicros);
  }

  private tallyOf(deployment: Deployment): Tally {
    let tally = this.tallies.get(deployment);
    if (tally === undefined) {
      tally = new Tally();
      this.tallies.set(deployment, tally);
    }
    return tally;
  }
}

/**
 * lmgate_upstream_first_byte_seconds as prom-client renders a histogram (cumulative `le`
 * buckets, `_sum`, `_count`), built from the tallies at scrape time.
 */
function firstByteHistogram(tallies: ReadonlyMap<Deployment, Tally>) {
  const name = 'lmgate_upstream_first_byte_seconds';
  const help = 'Time from sending a request to an upstream deployment to its response headers (a whole answer when not streaming).';
  const get = () => {
    const values: MetricValueWithName<string>[] = [];
    for (const [deployment, tally] of tallies) {
      const labels = labelsOf(deployment);
      let cumulative = 0;
      tally.firstByteBuckets.forEach((count, bucket) => {
        cumulative += count;
        const le = bucket < FIRST_BYTE_BUCKETS.length ? FIRST_BYTE_BUCKETS[bucket]! : '+Inf';
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative });
      });
      values.push({ metricName: `${name}_sum`, labels, value: tally.firstByteSum });
      values.push({ metricName: `${name}_count`, labels, value: tally.firstByteCount });
    }
    return { name, help, type: 'histogram', values, aggregator: 'sum' };
  };
  // The registry only calls get() (and reset() from resetMetrics()) on what it holds.
  return { name, help, type: 'histogram', aggregator: 'sum', get, reset: () => {} } as unknown as Metric;
}

function labelsOf(deployment: Deployment): Record<(typeof DEPLOYMENT_LABELS)[number], string> {
  // The origin (scheme, host, port): never a key, never a path that might carry one.
  return { model: deployment.modelId, deployment: String(deployment.index), upstream: deployment.origin };
}
