// Tiers from config: limits, the models they allow (glob patterns) and whether they need
// an active subscription. Built once; looked up per request from memory.
import type { Config, TierConfig } from '../config/schema.js';
import { ForbiddenError, type ForbiddenReason } from '../errors.js';
import type { Account } from '../store/store.js';

export interface Tier {
  name: string;
  config: TierConfig;
  /** Its price multiplier in parts per million (config `price_multiplier`). */
  multiplierPpm: number;
  allowsModel(modelId: string): boolean;
}

export class Tiers {
  private readonly tiers = new Map<string, Tier>();
  private readonly defaultTier: Tier;

  constructor(config: Config) {
    for (const [name, tier] of Object.entries(config.tiers)) {
      const patterns = tier.models.map(globToRegExp);
      this.tiers.set(name, {
        name,
        config: tier,
        multiplierPpm: Math.round(tier.price_multiplier * 1_000_000),
        allowsModel: (id) => patterns.some((p) => p.test(id)),
      });
    }
    this.defaultTier = this.tiers.get(config.default_tier)!;
  }

  /**
   * The account's tier. An account whose tier was removed from config falls back to the
   * default tier rather than being locked out.
   */
  of(account: Account): Tier {
    return this.tiers.get(account.tier) ?? this.defaultTier;
  }

  list(): Tier[] {
    return [...this.tiers.values()];
  }
}

/**
 * Where an account stands with the API: whether it may call it and, when not, why. The one
 * rule behind the API's 403 (step 2 of the request path) and the dashboard's account state.
 */
export type Standing =
  | { state: 'ok' }
  /** The operator gave the tier without a subscription; null: until they take it back. */
  | { state: 'complimentary'; until: string | null }
  /** A failed renewal: the tier is kept until the grace period ends. */
  | { state: 'past_due'; graceUntil: string }
  | { state: 'suspended' }
  /** The tier needs a subscription the account never had. */
  | { state: 'subscription_required' }
  /** It had one: canceled, or past due beyond its grace period. */
  | { state: 'subscription_lapsed' };

// Shared, so the request path allocates nothing for the usual answers.
const OK: Standing = Object.freeze({ state: 'ok' });
const SUSPENDED: Standing = Object.freeze({ state: 'suspended' });

export function standingOf(account: Account, tier: Tier, nowMs = Date.now()): Standing {
  if (account.status !== 'active') return SUSPENDED;
  if (!tier.config.subscription || account.subscriptionStatus === 'active') return OK;
  if (hasLiveComp(account, nowMs)) return { state: 'complimentary', until: account.comp!.until };
  if (hasLiveSubscription(account, nowMs)) return { state: 'past_due', graceUntil: account.subscriptionGraceUntil! };
  return { state: account.subscriptionStatus === 'inactive' ? 'subscription_required' : 'subscription_lapsed' };
}

/** The API's refusal for a standing; undefined when the account may call. */
export function refusalOf(standing: Standing): ForbiddenReason | undefined {
  if (standing.state === 'suspended') return 'account_suspended';
  if (standing.state === 'subscription_required' || standing.state === 'subscription_lapsed') return 'subscription_inactive';
  return undefined;
}

/** Step 2 of the request path: suspended account, or a paid tier without a live subscription or comp. */
export function assertMayUseApi(account: Account, tier: Tier, nowMs = Date.now()): void {
  const refusal = refusalOf(standingOf(account, tier, nowMs));
  if (refusal) throw new ForbiddenError(refusal);
}

/** Whether `tier` needs a subscription `account` lacks (nor has as a comp): the operator's warning on set-tier. */
export function lacksNeededSubscription(account: Account, tier: Tier, nowMs = Date.now()): boolean {
  const state = standingOf({ ...account, status: 'active', tier: tier.name }, tier, nowMs).state;
  return state === 'subscription_required' || state === 'subscription_lapsed';
}

/** What the operator is told when a tier change leaves the account refused (CLI, admin API, console). */
export function subscriptionWarning(account: Account, tierName: string): string {
  return `${tierName} needs a subscription ${account.email} does not have: every API call is refused (403 subscription_inactive) until they subscribe. To give the tier without one, make it complimentary (set-tier with --comp, optionally --until DATE).`;
}

/** Active, or past_due within its grace period (a failed renewal gets time to be fixed). */
export function hasLiveSubscription(account: Account, nowMs = Date.now()): boolean {
  if (account.subscriptionStatus === 'active') return true;
  return account.subscriptionStatus === 'past_due' && account.subscriptionGraceUntil !== null && Date.parse(account.subscriptionGraceUntil) > nowMs;
}

/** A complimentary plan covers the tier it was given on, until its end (it ends by itself). */
function hasLiveComp({ comp, tier }: Account, nowMs: number): boolean {
  return comp !== null && comp.tier === tier && (comp.until === null || Date.parse(comp.until) > nowMs);
}

/** Step 5: the model exists (checked before) and the tier allows it. */
export function assertTierAllowsModel(tier: Tier, modelId: string): void {
  if (!tier.allowsModel(modelId)) throw new ForbiddenError('model_not_in_tier');
}

/** A model pattern (`*` any run of characters) as a whole-id matcher. */
export function globToRegExp(pattern: string): RegExp {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`);
}
