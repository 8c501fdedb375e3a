// Prometheus metrics (prom-client), one registry per app. Per upstream deployment: attempts
// by outcome, time to first byte, requests in flight and circuit state. Gauges are read
// from the deployments when scraped, so the request path only counts and observes.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptOutcome, Deployment, DeploymentObserver } from '../models/upstream/deployment.js';

const DEPLOYMENT_LABELS = ['model', 'deployment', 'upstream'] as const;
const CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;

export class Metrics implements DeploymentObserver {
  readonly registry = new Registry();
  private readonly deployments: Deployment[] = [];
  private readonly attempts: Counter<'model' | 'deployment' | 'upstream' | 'outcome'>;
  private readonly firstByte: Histogram<'model' | 'deployment' | 'upstream'>;
  /** Label lookups cost a hash per call; each deployment's children are made once. */
  private readonly children = new Map<Deployment, { firstByte: ReturnType<Histogram['labels']>; attempts: Map<AttemptOutcome, ReturnType<Counter['labels']>> }>();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'lmgate_' });
    this.attempts = new Counter({
      name: 'lmgate_upstream_attempts_total',
      help: 'Requests sent to an upstream deployment, by outcome (ok, rejected = upstream 4xx relayed, unreachable, busy, bad_answer, timeout, aborted = client gone).',
      labelNames: [...DEPLOYMENT_LABELS, 'outcome'],
      registers: [this.registry],
    });
    this.firstByte = new Histogram({
      name: 'lmgate_upstream_first_byte_seconds',
      help: "Time from sending a request to an upstream deployment to its response headers (a whole answer when not streaming).",
      labelNames: DEPLOYMENT_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    const deployments = this.deployments;
    new Gauge({
      name: 'lmgate_upstream_in_flight',
      help: 'Requests in flight to an upstream deployment.',
      labelNames: DEPLOYMENT_LABELS,
      registers: [this.registry],
      collect() {
        for (const deployment of deployments) this.set(labelsOf(deployment), deployment.inFlight);
      },
    });
    new Gauge({
      name: 'lmgate_upstream_healthy',
      help: "1 while a deployment's circuit is closed, 0 while it cools down or waits for its probe.",
      labelNames: DEPLOYMENT_LABELS,
      registers: [this.registry],
      collect() {
        for (const deployment of deployments) this.set(labelsOf(deployment), deployment.breaker.state === 'closed' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'lmgate_upstream_circuit_state',
      help: "A deployment's circuit breaker: 1 for its current state.",
      labelNames: [...DEPLOYMENT_LABELS, 'state'],
      registers: [this.registry],
      collect() {
        for (const deployment of deployments) {
          const current = deployment.breaker.state;
          for (const state of CIRCUIT_STATES) this.set({ ...labelsOf(deployment), state }, state === current ? 1 : 0);
        }
      },
    });
  }

  /** Makes a model's deployments visible (with zeros) before their first request. */
  watch(deployments: readonly Deployment[]): void {
    this.deployments.push(...deployments);
    for (const deployment of deployments) this.childrenOf(deployment);
  }

  attemptEnded(deployment: Deployment, outcome: AttemptOutcome, firstByteSec: number | undefined): void {
    const children = this.childrenOf(deployment);
    let counter = children.attempts.get(outcome);
    if (counter === undefined) {
      counter = this.attempts.labels({ ...labelsOf(deployment), outcome });
      children.attempts.set(outcome, counter);
    }
    counter.inc();
    if (firstByteSec !== undefined) children.firstByte.observe(firstByteSec);
  }

  private childrenOf(deployment: Deployment) {
    let children = this.children.get(deployment);
    if (children === undefined) {
      children = { firstByte: this.firstByte.labels(labelsOf(deployment)), attempts: new Map() };
      this.children.set(deployment, children);
    }
    return children;
  }
}

function labelsOf(deployment: Deployment): Record<(typeof DEPLOYMENT_LABELS)[number], string> {
  // The origin (scheme, host, port): never a key, never a path that might carry one.
  return { model: deployment.modelId, deployment: String(deployment.index), upstream: deployment.origin };
}
