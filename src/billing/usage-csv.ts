// Usage records as CSV (RFC 4180, CRLF line ends), one place for the columns: the
// dashboard's download (one account's records) and `lmgate usage export` (the operator's,
// across accounts, so each row also says whose it is).
import { formatCredits } from '../money.js';
import type { UsageRecord } from '../store/store.js';

// New columns go at the end, so a script that reads the first ones by position keeps working.
export const USAGE_CSV_HEADER =
  'created_at,request_id,model,key_id,key_name,prompt_tokens,completion_tokens,cost_credits,latency_ms,status,streamed,finish_reason,' +
  'cached_tokens,cache_write_tokens,cache_write_1h_tokens,reasoning_tokens,basis,outcome,unpaid_credits';

/** The operator's export: the dashboard's columns, then whose record it is. */
export const USAGE_EXPORT_CSV_HEADER = `${USAGE_CSV_HEADER},id,account_id,member_id`;

export function usageCsvRow(record: UsageRecord, keyName: string): string {
  return [
    record.createdAt,
    csvText(record.requestId),
    csvText(record.model),
    record.keyId,
    csvText(keyName),
    record.promptTokens,
    record.completionTokens,
    formatCredits(record.costMicros),
    record.latencyMs,
    record.status,
    record.streamed,
    csvText(record.finishReason ?? ''),
    record.cachedTokens,
    record.cacheWriteTokens,
    record.cacheWrite1hTokens,
    record.reasoningTokens,
    record.basis,
    record.outcome,
    formatCredits(record.shortfallMicros),
  ].join(',');
}

export function usageExportCsvRow(record: UsageRecord, keyName: string): string {
  return [usageCsvRow(record, keyName), csvText(record.id), csvText(record.accountId), csvText(record.memberId ?? '')].join(',');
}

/**
 * RFC 4180 quoting, and a leading apostrophe for text a spreadsheet would run as a formula
 * (a key named `=HYPERLINK(...)` is the customer's own text, but opened in Excel it is code).
 */
function csvText(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
