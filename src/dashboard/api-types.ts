// The dashboard API's replies (/api/dashboard/*) as JSON types: camelCase, money in integer
// micro-credits (*Micros), times as ISO 8601 UTC strings, null where a value is absent.
// The web app imports these (`import type`), and each route's response schema is checked
// to send exactly its type (JsonOf in http/typebox.ts), so a change that breaks the app fails
// `tsc` on both sides. No imports: the web's typecheck reads this file and nothing of the
// server behind it.

export interface AccountView {
  id: string;
  email: string;
  name: string | null;
  tier: string;
  status: string;
  subscriptionStatus: string;
  createdAt: string;
  /** 'operator' opens the console (/admin). */
  role: string;
}

/** The signed-in account and the token state-changing calls must carry (sign-in, sign-up, session). */
export interface SessionView {
  account: AccountView;
  csrfToken: string;
}

/** POST /signup when the address must be confirmed first: nobody is signed in yet. */
export interface ConfirmationSent {
  emailToConfirm: string;
}

/** GET /config, before anyone signs in. */
export interface DashboardConfig {
  signupOpen: boolean;
  /** "Forgot password" mails a reset link (smtp is configured). */
  passwordResetByMail: boolean;
  /** A sign-up is confirmed by a link mailed to the address before the account exists. */
  verifyEmail: boolean;
  /** How to reach the operator (config `support`, or `contact`), each null when not configured. */
  support: { email: string | null; url: string | null };
  baseUrls: string[];
  /** Sign-in through the operator's identity provider (auth.oidc), with its button's words; null when not configured. */
  sso: { label: string } | null;
}

export interface PlanView {
  name: string;
  subscription: boolean;
  priceMonth: number | null;
  /** What priceMonth is in (ISO 4217, lower case). */
  currency: string;
  creditsMonthMicros: number | null;
  rpm: number;
  tpm: number;
  concurrency: number;
  /** The models the plan includes, by id. */
  models: string[];
  selfService: boolean;
  current: boolean;
}

/**
 * Whether the account may call the API and, when not, why (the rule the API refuses by,
 * billing/tiers.ts). `until`: a complimentary plan's end, or a past-due subscription's grace end.
 */
export interface StandingView {
  state: 'ok' | 'complimentary' | 'past_due' | 'suspended' | 'subscription_required' | 'subscription_lapsed';
  until: string | null;
}

export interface Overview {
  account: AccountView;
  standing: StandingView;
  balanceMicros: number;
  reservedMicros: number;
  plan: PlanView;
  baseUrls: string[];
}

export interface ModelView {
  id: string;
  description: string | null;
  ownedBy: string;
  context: number;
  maxOutput: number;
  /** Which of chat, responses, completions and embeddings it serves. */
  endpoints: string[];
  /** Credits per million tokens of each kind, as this account pays them (a decimal, for people). */
  price: {
    inputPerMillion: number;
    cachedInputPerMillion: number;
    cacheWritePerMillion: number;
    cacheWrite1hPerMillion: number;
    outputPerMillion: number;
    reasoningPerMillion: number;
  };
}

export interface ModelList {
  models: ModelView[];
}

export interface KeyView {
  id: string;
  name: string;
  prefix: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'revoked';
  /** Revoked because it was reported found in public, and where. */
  leaked: boolean;
  leakUrl: string | null;
  /** The key's own controls, each null when unset. */
  expiresAt: string | null;
  expired: boolean;
  allowedModels: string[] | null;
  allowedIps: string[] | null;
  rpm: number | null;
  /** Its credit limit, with what it spent in the limit's current window (the month, UTC, or all time). */
  creditLimitMicros: number | null;
  creditLimitPeriod: 'total' | 'month' | null;
  creditSpentMicros: number | null;
}

export interface KeyList {
  keys: KeyView[];
}

/** The key just created: its secret is shown this once. */
export interface CreatedKey {
  key: KeyView;
  secret: string;
}

/** A key edited or revoked. */
export interface OneKey {
  key: KeyView;
}

export type UsageOutcome = 'completed' | 'client_gone' | 'upstream_failed' | 'drained';

/** What a usage record's totals leave out: the parts priced apart, where its counts came from, how it ended, what was unpaid. */
export interface TokenKinds {
  /** Parts of the totals priced apart: cached input, cache writes (both lifetimes), reasoning. */
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** The upstream's counts, or lmgate's (it reported none); null for a refusal. */
  basis: 'reported' | 'counted' | null;
  /** How the answer ended; null for a refusal. */
  outcome: UsageOutcome | null;
  /** Of the cost, what the account could not pay (its balance ran out). */
  shortfallMicros: number;
}

export interface RequestLogEntry extends TokenKinds {
  id: string;
  requestId: string;
  at: string;
  keyId: string;
  /** '' when the key is not found (keys are never deleted, so only after a hand edit). */
  keyName: string;
  model: string | null;
  status: number;
  reason: string | null;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  streamed: boolean;
  refused: boolean;
}

export interface RequestLog {
  retentionDays: number;
  requests: RequestLogEntry[];
  /** Where the next page starts; null on the last. */
  next: string | null;
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
}

export interface UsageDay extends UsageTotals {
  date: string;
}

export interface UsageByModel extends UsageDay {
  model: string;
}

export interface UsageByKey extends UsageDay {
  keyId: string;
  /** '' when the key is not found (keys are never deleted, so only after a hand edit). */
  keyName: string;
}

export interface UsageRecord extends TokenKinds {
  id: string;
  requestId: string;
  createdAt: string;
  model: string;
  keyId: string;
  /** '' when the key is not found, as in UsageByKey. */
  keyName: string;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  latencyMs: number;
  status: number;
  streamed: boolean;
  finishReason: string | null;
}

/** GET /usage: whole UTC days, `from` and `to` inclusive, every day listed (zeros included). */
export interface Usage {
  from: string;
  to: string;
  days: UsageDay[];
  byModel: UsageByModel[];
  byKey: UsageByKey[];
  recent: UsageRecord[];
}

export interface Plans {
  current: string;
  standing: StandingView;
  subscriptionStatus: string;
  plans: PlanView[];
}

/** POST /plan: the account on its new plan. */
export interface PlanChanged {
  account: AccountView;
}

export interface LedgerEntry {
  id: number;
  kind: string;
  amountMicros: number;
  reason: string | null;
  createdAt: string;
}

export interface Ledger {
  balanceMicros: number;
  entries: LedgerEntry[];
}

/** A line of the balance's history: a ledger entry, or a UTC day's usage (`day`, `charges`). */
export interface HistoryEntry extends LedgerEntry {
  /** For a day's usage: how many charges it sums; its id is the newest of them. */
  charges?: number;
  day?: string;
}

export interface History {
  entries: HistoryEntry[];
  /** Where the next page starts; null on the last. */
  next: number | null;
}

export interface Redeemed {
  creditedMicros: number;
  balanceMicros: number;
}

/** GET /payments/options: without payments.stripe, `enabled` is false and the rest is empty. */
export interface PaymentOptions {
  enabled: boolean;
  currency: string | null;
  minorPerUnit: number | null;
  /** What one unit of the currency buys, so the page can show what an amount adds. */
  creditsMicrosPerUnit: number | null;
  presetsMinor: number[];
  minMinor: number | null;
  maxMinor: number | null;
  /** Paid plans that can be subscribed to through Stripe Checkout. */
  subscribable: string[];
}

/** A Stripe page to send the browser to: Checkout or the Billing Portal. */
export interface Redirect {
  url: string;
}

export interface PaymentView {
  id: string;
  kind: string;
  status: string;
  currency: string;
  /** In the currency's minor units (cents). */
  amountMinor: number;
  refundedMinor: number;
  creditsMicros: number;
  /** The return page waits for its own Checkout Session's payment. */
  checkoutSessionId: string | null;
  receiptUrl: string | null;
  invoiceUrl: string | null;
  createdAt: string;
}

export interface PaymentList {
  payments: PaymentView[];
}

export interface AutoRechargeView {
  enabled: boolean;
  thresholdMicros: number;
  amountMinor: number;
  /** Why it was turned off (a declined card), until the customer saves it again. */
  notice: string | null;
}

export type OrgRole = 'owner' | 'admin' | 'billing' | 'member';

export type OrgPermission = 'members' | 'keys' | 'budgets' | 'webhooks' | 'billing' | 'usage' | 'owners';

/** An organisation the signed-in person belongs to, their role in it, and what the role may do (auth/org-roles.ts). */
export interface OrgRef {
  id: string;
  name: string;
  role: OrgRole;
  permissions: OrgPermission[];
}

/** GET /orgs: the one the session acts for (null: the person's own account), and all of the person's. */
export interface Orgs {
  current: OrgRef | null;
  orgs: OrgRef[];
}

export interface OrgMember {
  accountId: string;
  email: string;
  name: string | null;
  role: OrgRole;
  joinedAt: string;
}

/** A monthly budget (memberId null: the whole organisation's) and what was spent against it this month. */
export interface OrgBudget {
  memberId: string | null;
  monthlyMicros: number;
  spentMicros: number;
}

export interface OrgDetail {
  org: OrgRef;
  members: OrgMember[];
  budgets: OrgBudget[];
}
