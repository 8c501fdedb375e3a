// The background sender of webhook deliveries, in every serving instance: it claims due
// deliveries (each endpoint's oldest pending one, leased so no two instances send it at
// once), posts them off the request path, and records every attempt with what follows
// (delivered, again later by the retry schedule, or given up). A slow or dead endpoint
// holds only its own queue: each delivery is sent on its own, bounded by a timeout.
// Clock and schedule are injectable, so tests move time instead of waiting for it.
import type { Store } from '../store/store.js';
import type { ClaimedWebhookDelivery } from '../store/webhook-store.js';
import type { Agent } from 'undici';
import { webhookAgent } from './address-guard.js';
import { DEFAULT_RETRY_SCHEDULE, nextAttemptAt, type RetrySchedule } from './schedule.js';
import { sendWebhook } from './send.js';

export type WebhookDeliveryStore = Pick<Store, 'claimWebhookDeliveries' | 'recordWebhookAttempt' | 'releaseWebhookDelivery'>;

export interface WebhookWorkerOptions {
  schedule?: RetrySchedule;
  /** Milliseconds since the epoch. */
  now?: () => number;
  /** How long an attempt waits for an answer. */
  timeoutMs?: number;
  /** How often to look for due deliveries (also looked for at once when one finishes). */
  pollMs?: number;
  /** How long a claim holds a delivery: past it, another instance may take it (this one died). */
  leaseMs?: number;
  /** Deliveries claimed per look. */
  batchSize?: number;
  /** Deliver to loopback and private addresses too (webhooks.allow_private_addresses). */
  allowPrivateAddresses?: boolean;
  onError?: (err: unknown) => void;
}

const DEFAULTS = { timeoutMs: 10_000, pollMs: 1_000, leaseMs: 60_000, batchSize: 20 };

export class WebhookWorker {
  private readonly schedule: RetrySchedule;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private readonly onError: (err: unknown) => void;
  private readonly allowPrivateAddresses: boolean;
  private readonly agent: Agent;
  private readonly stopping = new AbortController();
  private readonly sending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<unknown> | undefined;
  private lookAgain = false;

  constructor(
    private readonly store: WebhookDeliveryStore,
    options: WebhookWorkerOptions = {},
  ) {
    this.schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.pollMs = options.pollMs ?? DEFAULTS.pollMs;
    this.leaseMs = Math.max(options.leaseMs ?? DEFAULTS.leaseMs, this.timeoutMs * 2);
    this.batchSize = options.batchSize ?? DEFAULTS.batchSize;
    this.onError = options.onError ?? (() => undefined);
    this.allowPrivateAddresses = options.allowPrivateAddresses ?? false;
    this.agent = webhookAgent(this.allowPrivateAddresses);
  }

  start(): void {
    if (this.timer || this.stopping.signal.aborted) return;
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
    this.poll();
  }

  /** Looks for due deliveries now (an event was just recorded, or a delivery finished). */
  poll(): void {
    if (!this.timer || this.stopping.signal.aborted) return;
    if (this.looking) {
      this.lookAgain = true;
      return;
    }
    this.looking = this.claimAndSend()
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.looking = undefined;
        if (this.lookAgain) {
          this.lookAgain = false;
          this.poll();
        }
      });
  }

  /**
   * Claims what is due now and sends it; resolves once those attempts are recorded, with
   * how many there were. The timer does the same without waiting; tests call this.
   */
  async deliverDue(): Promise<number> {
    const sends = await this.claimAndSend();
    await Promise.all(sends);
    return sends.length;
  }

  /** Stops looking; attempts under way are cut short and their deliveries given back untried. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await this.looking;
    await Promise.all([...this.sending]);
    await this.agent.close();
  }

  private async claimAndSend(): Promise<Promise<void>[]> {
    const nowMs = this.now();
    const claims = await this.store.claimWebhookDeliveries(new Date(nowMs).toISOString(), new Date(nowMs + this.leaseMs).toISOString(), this.batchSize);
    return claims.map((claim) => {
      const send = this.send(claim).catch((err: unknown) => this.onError(err));
      this.sending.add(send);
      void send.finally(() => {
        this.sending.delete(send);
        this.poll();
      });
      return send;
    });
  }

  private async send(claim: ClaimedWebhookDelivery): Promise<void> {
    const { delivery, event, endpoint } = claim;
    const attemptedMs = this.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousSecretUntil && Date.parse(endpoint.previousSecretUntil) > attemptedMs) secrets.push(endpoint.previousSecret);
    const result = await sendWebhook(
      { url: endpoint.url, id: event.id, timestampSec: Math.floor(attemptedMs / 1000), body: event.payload, secrets },
      { timeoutMs: this.timeoutMs, stop: this.stopping.signal, agent: this.agent, allowPrivateAddresses: this.allowPrivateAddresses },
    );
    if (this.stopping.signal.aborted && result.statusCode === null) {
      await this.store.releaseWebhookDelivery(claim);
      return;
    }
    const delivered = result.error === null;
    const retryAt = delivered ? undefined : nextAttemptAt(this.schedule, delivery.attempts + 1, Date.parse(delivery.createdAt), this.now());
    await this.store.recordWebhookAttempt(claim, {
      attempt: { attemptedAt: new Date(attemptedMs).toISOString(), statusCode: result.statusCode, durationMs: result.durationMs, error: result.error },
      status: delivered ? 'delivered' : retryAt === undefined ? 'failed' : 'pending',
      nextAttemptAt: new Date(retryAt ?? attemptedMs).toISOString(),
    });
  }
}
