// One chat request's bill, from reservation to settlement (request path steps 6 and 8).
import type { Usage } from './usage.js';
import type { TokenPlan } from '../chat/plan.js';
import { InsufficientCreditsError } from '../errors.js';
import type { MaybePromise } from '../maybe-promise.js';
import type { ModelEntry } from '../models/catalog.js';
import { isoNow } from '../store/clock.js';
import { newTimeOrderedId } from '../ids.js';
import { costMicros, type Prices } from './pricing.js';
import type { Decision, Pass } from './admission.js';
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

/** What a request that used `usage` is charged: its cost, never more than it reserved. */
export function chargeMicros(prices: Prices, usage: Usage, reservedMicros: number): number {
  return Math.min(costMicros(prices, usage.promptTokens, usage.completionTokens), reservedMicros);
}

/**
 * Admits a request for its worst case. A 402 says, when the output ceiling is what does
 * not fit (no max_tokens, or a large one), how many output tokens would: a request is
 * refused for what it might write, not for what it will.
 */
export function admitRequest(pass: Pass, model: ModelEntry, plan: TokenPlan): MaybePromise<Decision> {
  const refused = (err: unknown): never => {
    throw err instanceof InsufficientCreditsError ? withFit(err, model, plan) : err;
  };
  try {
    const decision = pass.admit({ promptTokens: plan.promptTokens, worstCaseMicros: worstCaseMicros(model, plan.promptTokens, plan.maxOutputTokens) });
    return decision instanceof Promise ? decision.catch(refused) : decision;
  } catch (err) {
    return refused(err);
  }
}

function withFit(err: InsufficientCreditsError, prices: Prices, plan: TokenPlan): InsufficientCreditsError {
  if (err.neededMicros === undefined || err.availableMicros <= 0) return err;
  const fit = outputTokensThatFit(prices, plan.promptTokens, err.availableMicros);
  if (fit < 1 || fit >= plan.maxOutputTokens) return err;
  return new InsufficientCreditsError(err.neededMicros, err.availableMicros, { maxTokensThatFit: fit, reason: err.reason });
}

/**
 * The most output tokens whose cost, with the prompt's, is within `availableMicros`:
 * costs round up, so the exact sum of products must not pass available × 10^6 (BigInt: the
 * product may pass 2^53). -1 when the prompt alone does not fit; unbounded output when it is free.
 */
export function outputTokensThatFit(prices: Prices, promptTokens: number, availableMicros: number): number {
  const room = BigInt(availableMicros) * 1_000_000n - BigInt(promptTokens) * BigInt(prices.inputPerMTokMicros);
  if (room < 0n) return -1;
  if (prices.outputPerMTokMicros === 0) return Number.MAX_SAFE_INTEGER;
  return Number(room / BigInt(prices.outputPerMTokMicros));
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
   * Returns the balance left after the charge, where known (Pass.release).
   */
  finish(usage: Usage, status: number, finishReason: string | null): number | undefined {
    if (this.done) return undefined;
    this.done = true;
    const { identity } = this;
    const cost = chargeMicros(identity.model, usage, this.pass.reservedMicros);
    return this.pass.release({
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
