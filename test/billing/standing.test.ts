// Where an account stands with the API (billing/tiers.ts standingOf): the one rule behind
// the API's 403, the dashboard's account state and the operator's set-tier warning.
import { describe, expect, it } from 'vitest';
import { lacksNeededSubscription, refusalOf, standingOf, Tiers } from '../../src/billing/tiers.js';
import { configSchema } from '../../src/config/schema.js';
import type { Account } from '../../src/store/store.js';

const tiers = new Tiers(configSchema.parse({}));
const pro = tiers.list().find((t) => t.name === 'pro')!;
const free = tiers.list().find((t) => t.name === 'free')!;
const NOW = Date.parse('2030-06-01T12:00:00.000Z');

function account(changes: Partial<Account>): Account {
  return {
    id: 'acct_1', email: 'a@example.test', name: null, status: 'active', tier: 'pro', subscriptionStatus: 'inactive', subscriptionPeriodEnd: null,
    subscriptionGraceUntil: null, cancelAtPeriodEnd: false, role: 'customer', priceMultiplierPpm: 1_000_000, comp: null, kind: 'personal', requireSso: false, createdAt: '2030-01-01T00:00:00.000Z',
    ...changes,
  };
}

describe('standingOf', () => {
  it.each([
    ['a free tier', account({ tier: 'free' }), free, { state: 'ok' }, undefined],
    ['an active subscription', account({ subscriptionStatus: 'active' }), pro, { state: 'ok' }, undefined],
    ['suspended, whatever the tier', account({ status: 'suspended', subscriptionStatus: 'active' }), pro, { state: 'suspended' }, 'account_suspended'],
    ['a paid tier never subscribed', account({}), pro, { state: 'subscription_required' }, 'subscription_inactive'],
    ['a canceled subscription', account({ subscriptionStatus: 'canceled' }), pro, { state: 'subscription_lapsed' }, 'subscription_inactive'],
    ['past due within its grace', account({ subscriptionStatus: 'past_due', subscriptionGraceUntil: '2030-06-02T00:00:00.000Z' }), pro, { state: 'past_due', graceUntil: '2030-06-02T00:00:00.000Z' }, undefined],
    ['past due beyond its grace', account({ subscriptionStatus: 'past_due', subscriptionGraceUntil: '2030-06-01T00:00:00.000Z' }), pro, { state: 'subscription_lapsed' }, 'subscription_inactive'],
    ['a comp with no end', account({ comp: { tier: 'pro', until: null } }), pro, { state: 'complimentary', until: null }, undefined],
    ['a comp before its end', account({ comp: { tier: 'pro', until: '2030-06-01T12:00:01.000Z' } }), pro, { state: 'complimentary', until: '2030-06-01T12:00:01.000Z' }, undefined],
    ['a comp at its end', account({ comp: { tier: 'pro', until: '2030-06-01T12:00:00.000Z' } }), pro, { state: 'subscription_required' }, 'subscription_inactive'],
    ['a comp given on another tier', account({ comp: { tier: 'team', until: null } }), pro, { state: 'subscription_required' }, 'subscription_inactive'],
    ['suspended on a comp', account({ status: 'suspended', comp: { tier: 'pro', until: null } }), pro, { state: 'suspended' }, 'account_suspended'],
  ] as const)('%s', (_, subject, tier, standing, refusal) => {
    expect(standingOf(subject, tier, NOW)).toEqual(standing);
    expect(refusalOf(standingOf(subject, tier, NOW))).toBe(refusal);
  });

  it('warns of a tier that needs a subscription the account lacks, not of a suspension or a comp', () => {
    expect(lacksNeededSubscription(account({}), pro, NOW)).toBe(true);
    expect(lacksNeededSubscription(account({ status: 'suspended', subscriptionStatus: 'active' }), pro, NOW)).toBe(false);
    expect(lacksNeededSubscription(account({ comp: { tier: 'pro', until: null } }), pro, NOW)).toBe(false);
    expect(lacksNeededSubscription(account({ tier: 'free' }), free, NOW)).toBe(false);
  });
});
