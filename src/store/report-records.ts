// Usage sums as the Store port returns them (store.ts re-exports them): the dashboard's
// totals and the operator's report.

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
}

/** The operator's totals: tokens by kind beside the totals, what lmgate counted, what was not paid. */
export interface UsageReportTotals extends UsageTotals {
  cachedTokens: number;
  /** Cache writes of both lifetimes. */
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** Requests billed on lmgate's count: their upstream reported no usage. */
  countedRequests: number;
  unpaidMicros: number;
}

export interface UsageReport {
  days: (UsageReportTotals & { date: string })[];
  byModel: (UsageReportTotals & { model: string })[];
  byAccount: (UsageReportTotals & { accountId: string; email: string })[];
  byKey: (UsageReportTotals & { keyId: string; keyName: string; accountId: string })[];
  byStatus: { status: number; requests: number; refused: number }[]; // refusals before any model included: `refused` of `requests`
  creditsAdded: { date: string; soldMicros: number; redeemedMicros: number; grantedMicros: number }[]; // per UTC day with any; sold: paid; redeemed: codes
}
