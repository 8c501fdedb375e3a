// Tiers from config: limits, the models they allow (glob patterns) and whether they need
// an active subscription. Built once; looked up per request from memory.
import type { Config, TierConfig } from '../config/schema.js';
import { ForbiddenError } from '../errors.js';
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

/** Step 2 of the request path: suspended account, or a paid tier without a live subscription. */
export function assertMayUseApi(account: Account, tier: Tier, nowMs = Date.now()): void {
  if (account.status !== 'active') throw new ForbiddenError('account_suspended');
  if (tier.config.subscription && !hasLiveSubscription(account, nowMs)) throw new ForbiddenError('subscription_inactive');
}

/** Active, or past_due within its grace period (a failed renewal gets time to be fixed). */
export function hasLiveSubscription(account: Account, nowMs = Date.now()): boolean {
  if (account.subscriptionStatus === 'active') return true;
  return account.subscriptionStatus === 'past_due' && account.subscriptionGraceUntil !== null && Date.parse(account.subscriptionGraceUntil) > nowMs;
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
