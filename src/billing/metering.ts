// One metered request's bill, from reservation to settlement (request path steps 6 and 8).
//
// The hold (reservation) is an estimate: it lets a request in only when its worst case is
// available. The charge is what the model served: price × the backend's usage, kind by
// kind, never cut at the hold. What the hold did not cover comes out of the balance still
// available when the request settles; only an account that cannot pay has its charge cut,
// and the usage record says by how much (`shortfallMicros`).
import { consistentUsage, type Usage } from './usage.js';
import type { UsageOutcome } from '../store/usage-basis.js';
import type { TokenPlan } from '../chat/plan.js';
import { InsufficientCreditsError } from '../errors.js';
import type { MaybePromise } from '../maybe-promise.js';
import type { ModelEntry } from '../models/catalog.js';
import { isoNow } from '../clock.js';
import { newTimeOrderedId } from '../ids.js';
import { costMicros, outputTokensThatFit, type PriceScale } from './pricing.js';
import type { Decision, Pass, Released } from './admission.js';
import type { Tier } from './tiers.js';

export interface RequestIdentity {
  requestId: string;
  accountId: string;
  keyId: string;
  memberId: string | null;
  tier: Tier;
  model: ModelEntry;
  scale: PriceScale;
  streamed: boolean;
}

/** The most a request can cost: its estimated prompt plus every output token of every choice. */
export function worstCaseMicros(model: ModelEntry, plan: TokenPlan, scale: PriceScale): number {
  return costMicros(model.holdPrices, { promptTokens: plan.holdPromptTokens, completionTokens: plan.maxOutputTokens * plan.choices }, scale);
}

/**
 * Admits a request for its worst case. A 402 says, when the output ceiling is what does
 * not fit (no max_tokens, or a large one), how many output tokens would: a request is
 * refused for what it might write, not for what it will.
 */
export function admitRequest(pass: Pass, model: ModelEntry, plan: TokenPlan, scale: PriceScale): MaybePromise<Decision> {
  const refused = (err: unknown): never => {
    throw err instanceof InsufficientCreditsError ? withFit(err, model, plan, scale) : err;
  };
  try {
    const decision = pass.admit({ promptTokens: plan.promptTokens, worstCaseMicros: worstCaseMicros(model, plan, scale) });
    return decision instanceof Promise ? decision.catch(refused) : decision;
  } catch (err) {
    return refused(err);
  }
}

function withFit(err: InsufficientCreditsError, model: ModelEntry, plan: TokenPlan, scale: PriceScale): InsufficientCreditsError {
  if (err.neededMicros === undefined || err.availableMicros <= 0) return err;
  const fitInAll = outputTokensThatFit(model.holdPrices, plan.holdPromptTokens, err.availableMicros, scale);
  // Every choice may write max_tokens: the ceiling that fits is shared among them.
  const fit = Math.floor(fitInAll / plan.choices);
  if (fit < 1 || fit >= plan.maxOutputTokens) return err;
  return new InsufficientCreditsError(err.neededMicros, err.availableMicros, { maxTokensThatFit: fit, reason: err.reason });
}

const NOTHING_RELEASED: Released = { balanceMicros: undefined, durable: undefined };

export class MeteredRequest {
  private readonly startedAtMs = performance.now();
  private done = false;

  constructor(
    private readonly identity: RequestIdentity,
    private readonly pass: Pass,
    private readonly plan: TokenPlan,
  ) {}

  /**
   * The backend is done (answered fully or partly, failed, or the client left): charge
   * what it served, release the hold and the slot, and queue the usage record. A backend
   * that failed before generating anything is finished with zero usage. Returns the
   * balance left after the charge, where known, and when the charge is durable (Pass.release).
   */
  finish(served: Usage, status: number, finishReason: string | null, outcome: UsageOutcome): Released {
    if (this.done) return NOTHING_RELEASED;
    this.done = true;
    const { identity, plan } = this;
    const usage = consistentUsage(served);
    // What the server counted teaches the estimate of the next prompt (a report of 0 is an
    // answer that never reached the model).
    if (usage.basis !== 'counted' && usage.promptTokens > 0) plan.calibration.observe(plan.countedTokens, usage.promptTokens);
    return this.pass.release({
      completionTokens: usage.completionTokens,
      record: {
        id: newTimeOrderedId('usage'),
        requestId: identity.requestId,
        accountId: identity.accountId,
        keyId: identity.keyId,
        memberId: identity.memberId,
        model: identity.model.id,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        cachedTokens: usage.cachedTokens ?? 0,
        cacheWriteTokens: usage.cacheWriteTokens ?? 0,
        cacheWrite1hTokens: usage.cacheWrite1hTokens ?? 0,
        reasoningTokens: usage.reasoningTokens ?? 0,
        basis: usage.basis ?? 'reported',
        outcome,
        costMicros: costMicros(identity.model, usage, identity.scale),
        shortfallMicros: 0,
        heldMicros: this.pass.reservedMicros,
        latencyMs: Math.round(performance.now() - this.startedAtMs),
        status,
        streamed: identity.streamed,
        finishReason,
        createdAt: isoNow(),
      },
    });
  }
}
