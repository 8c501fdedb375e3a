// One chat request's bill, from reservation to settlement (request path steps 6 and 8).
import type { Usage } from './usage.js';
import type { ModelEntry } from '../models/catalog.js';
import { isoNow } from '../store/clock.js';
import { newTimeOrderedId } from '../ids.js';
import { costMicros } from './pricing.js';
import type { Pass } from './admission.js';
import type { Tier } from './tiers.js';

export interface RequestIdentity {
  requestId: string;
  accountId: string;
  keyId: string;
  tier: Tier;
  model: ModelEntry;
  streamed: boolean;
}

/** The worst case a request can cost: its prompt plus every output token it may write. */
export function worstCaseMicros(model: ModelEntry, promptTokens: number, maxOutputTokens: number): number {
  return costMicros(model, promptTokens, maxOutputTokens);
}

export class MeteredRequest {
  private readonly startedAtMs = performance.now();
  private done = false;

  constructor(
    private readonly identity: RequestIdentity,
    private readonly pass: Pass,
  ) {}

  /**
   * The backend is done (answered fully or partly, failed, or the client left): charge
   * what it generated, never more than reserved, release the rest, and queue the usage
   * record. A backend that failed before generating anything is finished with zero usage.
   */
  finish(usage: Usage, status: number, finishReason: string | null): void {
    if (this.done) return;
    this.done = true;
    const { identity } = this;
    const cost = Math.min(costMicros(identity.model, usage.promptTokens, usage.completionTokens), this.pass.reservedMicros);
    this.pass.release({
      completionTokens: usage.completionTokens,
      record: {
        id: newTimeOrderedId('usage'),
        requestId: identity.requestId,
        accountId: identity.accountId,
        keyId: identity.keyId,
        model: identity.model.id,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        costMicros: cost,
        latencyMs: Math.round(performance.now() - this.startedAtMs),
        status,
        streamed: identity.streamed,
        finishReason,
        createdAt: isoNow(),
      },
    });
  }
}
