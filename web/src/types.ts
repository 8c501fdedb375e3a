// The dashboard API's shapes (/api/dashboard/*), as the server sends them. Money is integer
// micro-credits in fields named *Micros; dates are ISO 8601 UTC strings.

export interface Account {
  id: string;
  email: string;
  name: string | null;
  tier: string;
  status: string;
  subscriptionStatus: string;
  createdAt: string;
  /** 'operator' may open the console (/admin). */
  role: string;
}

export interface SessionInfo {
  account: Account;
  csrfToken: string;
}

export interface DashboardConfig {
  signupOpen: boolean;
  /** "Forgot password" mails a reset link (smtp is configured). */
  passwordResetByMail: boolean;
  /** A sign-up is confirmed by a link mailed to the address before the account exists. */
  verifyEmail: boolean;
  /** How to reach the operator (an email address or a URL), when configured. */
  contact: string | null;
  baseUrls: string[];
}

export interface Plan {
  name: string;
  subscription: boolean;
  priceMonth: number | null;
  /** The currency of priceMonth (ISO 4217, lower case). */
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

export interface Overview {
  account: Account;
  balanceMicros: number;
  reservedMicros: number;
  plan: Plan;
  baseUrls: string[];
}

export interface ApiKey {
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
  /** Its credit limit, and what it spent in the limit's window (this month, UTC, or in total). */
  creditLimitMicros: number | null;
  creditLimitPeriod: 'total' | 'month' | null;
  creditSpentMicros: number | null;
}

/** What a usage record's totals leave out: the parts priced apart, where its counts came from, how it ended, what was unpaid. */
export interface TokenKinds {
  /** Parts of the totals priced apart: cached input, cache writes, reasoning. */
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
  /** null when the key is not the account's any more. */
  keyName: string | null;
}

export interface UsageRecord extends TokenKinds {
  id: string;
  requestId: string;
  createdAt: string;
  model: string;
  keyId: string;
  keyName: string | null;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  latencyMs: number;
  status: number;
  streamed: boolean;
  finishReason: string | null;
}

export type UsageOutcome = 'completed' | 'client_gone' | 'upstream_failed' | 'drained';

export interface Usage {
  from: string;
  to: string;
  days: UsageDay[];
  byModel: UsageByModel[];
  byKey: UsageByKey[];
  recent: UsageRecord[];
}

export interface Model {
  id: string;
  description: string | null;
  ownedBy: string;
  context: number;
  maxOutput: number;
  /** Which of chat, responses, completions and embeddings it serves. */
  endpoints: string[];
  /** Credits per million tokens. */
  /** Credits per million tokens of each kind, as this account pays them. */
  price: {
    inputPerMillion: number;
    cachedInputPerMillion: number;
    cacheWritePerMillion: number;
    cacheWrite1hPerMillion: number;
    outputPerMillion: number;
    reasoningPerMillion: number;
  };
}

export interface Plans {
  current: string;
  subscriptionStatus: string;
  plans: Plan[];
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
  charges?: number;
  day?: string;
}

export interface BalanceHistory {
  entries: HistoryEntry[];
  next: number | null;
}

export interface Redemption {
  creditedMicros: number;
  balanceMicros: number;
}

/** /payments/options: without payments.stripe, `enabled` is false and the rest is empty. */
export interface PaymentOptions {
  enabled: boolean;
  currency: string | null;
  minorPerUnit: number | null;
  creditsMicrosPerUnit: number | null;
  presetsMinor: number[];
  minMinor: number | null;
  maxMinor: number | null;
  /** Paid plans that can be subscribed to through Stripe Checkout. */
  subscribable: string[];
}

/** What payments are when they are on. */
export interface EnabledPayments {
  currency: string;
  minorPerUnit: number;
  creditsMicrosPerUnit: number;
  presetsMinor: number[];
  minMinor: number;
  maxMinor: number;
  subscribable: string[];
}

/** A Stripe page to send the browser to: Checkout or the Billing Portal. */
export interface Redirect {
  url: string;
}

export interface Payment {
  id: string;
  kind: string;
  status: string;
  currency: string;
  /** In the currency's minor units (cents). */
  amountMinor: number;
  refundedMinor: number;
  creditsMicros: number;
  checkoutSessionId: string | null;
  receiptUrl: string | null;
  invoiceUrl: string | null;
  createdAt: string;
}

export interface Payments {
  payments: Payment[];
}

export interface AutoRecharge {
  enabled: boolean;
  thresholdMicros: number;
  amountMinor: number;
  /** Why it was turned off (a declined card), until the customer saves it again. */
  notice: string | null;
}
