// Accounts as the Store port holds them (store.ts re-exports them): a person's own, or an
// organisation's (org-store.ts).

export type AccountStatus = 'active' | 'suspended';
export type AccountRole = 'customer' | 'operator'; // operators use the admin API and console with their session
export type AccountKind = 'personal' | 'org';
export type SubscriptionStatus = 'active' | 'past_due' | 'canceled' | 'inactive';

export interface Account {
  id: string;
  email: string;
  name: string | null;
  status: AccountStatus;
  tier: string;
  subscriptionStatus: SubscriptionStatus;
  subscriptionPeriodEnd: string | null;
  /** A past_due subscription keeps its tier until then (payments' grace period). */
  subscriptionGraceUntil: string | null;
  /** The subscription ends at the period's end rather than renewing. */
  cancelAtPeriodEnd: boolean;
  role: AccountRole;
  /** Every price × this / 1,000,000 for the account (a discount or a markup, beside its tier's). */
  priceMultiplierPpm: number;
  comp: { tier: string; until: string | null } | null; // a tier given without its subscription, until a time or not (billing/tiers.ts)
  /** A person's own account, or an organisation's (its members in org-store.ts). */
  kind: AccountKind;
  /** An organisation whose members sign in with OpenID Connect only. */
  requireSso: boolean;
  createdAt: string;
}
