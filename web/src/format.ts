// How numbers, money and dates look to people. The API speaks integer micro-credits and
// ISO 8601 UTC; only this module turns them into text.

export const MICROS_PER_CREDIT = 1_000_000;

const credits = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/**
 * Credits from micro-credits, one way on every screen: at least two decimals, and as many
 * as the amount has, up to the micro-credit ("1,234.50", "9.998384", "0.000042"), so a
 * balance visibly moves by each request's cost.
 */
export function formatCredits(micros: number): string {
  return credits.format(micros / MICROS_PER_CREDIT);
}

/**
 * A table column of credits (per request, per day): each amount with as many decimals as
 * the column's most precise one, so the decimal points line up ("0.000360" over
 * "0.000982", not "0.00036").
 */
export function creditsColumn(column: readonly number[]): (micros: number) => string {
  const decimals = Math.max(2, ...column.map(decimalsOf));
  const format = new Intl.NumberFormat('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: 6 });
  return (micros) => format.format(micros / MICROS_PER_CREDIT);
}

/** Decimals a micro-credit amount needs: 1_500_000 → 1, 360 → 4. */
function decimalsOf(micros: number): number {
  let decimals = 6;
  for (let rest = Math.abs(micros); decimals > 0 && rest % 10 === 0; rest /= 10) decimals--;
  return decimals;
}

/** Prices are given in credits (per million tokens); shown like every other amount. */
export function formatCreditsValue(credits: number): string {
  return formatCredits(Math.round(credits * MICROS_PER_CREDIT));
}

const integer = new Intl.NumberFormat('en-US');
export function formatNumber(value: number): string {
  return integer.format(value);
}

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
/** Axis labels: 1.2K, 3M. */
export function formatCompact(value: number): string {
  return compact.format(value);
}

const dateFormat = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric' });
const dateTimeFormat = new Intl.DateTimeFormat('en-US', {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});
const dayFormat = new Intl.DateTimeFormat('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function formatDate(iso: string): string {
  return dateFormat.format(new Date(iso));
}

export function formatDateTime(iso: string): string {
  return dateTimeFormat.format(new Date(iso));
}

const DAY_MS = 24 * 60 * 60 * 1000;
const utcDateFormat = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });

/**
 * When a key or code stops working. One set as a day is stored as the end of that UTC day
 * (the next midnight, or its last millisecond) and reads as that day, "Dec 31, 2026, end of
 * day (UTC)", not as the next day's midnight; any other moment as a date and time.
 */
export function formatExpiry(iso: string): string {
  const atMs = Date.parse(iso);
  if (iso.endsWith('T23:59:59.999Z')) return `${utcDateFormat.format(atMs)}, end of day (UTC)`;
  if (iso.endsWith('T00:00:00.000Z')) return `${utcDateFormat.format(atMs - DAY_MS)}, end of day (UTC)`;
  return formatDateTime(iso);
}

/** A UTC day (YYYY-MM-DD) as "Nov 22". */
export function formatDay(day: string): string {
  return dayFormat.format(new Date(`${day}T00:00:00Z`));
}

/** "free" → "Free". Plan names come from the operator's config. */
export function formatPlanName(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** A Retry-After as words: "in 40 seconds", "in about 15 minutes". */
export function formatWait(seconds: number): string {
  if (seconds < 60) return `in ${Math.ceil(seconds)} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes === 1 ? 'in about a minute' : `in about ${minutes} minutes`;
}

const REFUSAL_REASONS: Record<string, string> = {
  insufficient_credits: 'Not enough credits',
  rate_limited: 'Rate limit reached',
  model_not_found: 'Unknown model',
  model_not_in_tier: 'Model not in your plan',
  account_suspended: 'Account suspended',
  subscription_inactive: 'Subscription inactive',
  validation_failed: 'Invalid request',
  malformed_json: 'Body is not JSON',
  unsupported_media_type: 'Not sent as JSON',
  payload_too_large: 'Request too large',
  route_not_found: 'Unknown endpoint',
  method_not_allowed: 'Wrong method',
  shutting_down: 'Server restarting',
  key_expired: 'Key expired',
  key_model_not_allowed: 'Model not allowed for this key',
  key_ip_not_allowed: 'Address not allowed for this key',
  key_rate_limit: 'Key’s rate limit reached',
  key_credit_limit: 'Key’s credit limit reached',
};

/**
 * Why the request log says a request was refused, in words; reasons added later still read.
 * A 422 names the fields its body named: "validation_failed:messages" → "Invalid request: messages".
 */
export function formatRefusalReason(reason: string): string {
  const [code = reason, fields] = reason.split(':', 2);
  const words = REFUSAL_REASONS[code] ?? formatPlanName(code.replace(/_/g, ' '));
  return fields === undefined || fields === '' ? words : `${words}: ${fields.split(',').join(', ')}`;
}

const LEDGER_KINDS: Record<string, string> = {
  grant: 'Grant',
  top_up: 'Top-up',
  usage: 'Usage',
  refund: 'Refund',
  adjustment: 'Adjustment',
  subscription_credit: 'Plan credits',
};

/** A ledger entry's kind in words; kinds added later still read sensibly. */
export function formatLedgerKind(kind: string): string {
  return LEDGER_KINDS[kind] ?? formatPlanName(kind.replace(/_/g, ' '));
}

const moneyFormats = new Map<string, Intl.NumberFormat>();
function moneyFormat(currency: string): Intl.NumberFormat {
  let format = moneyFormats.get(currency);
  if (format === undefined) {
    format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
    moneyFormats.set(currency, format);
  }
  return format;
}

/** Minor units per unit of a currency as Stripe counts them: 100 for USD, 1 for JPY. */
function minorPerUnit(currency: string): number {
  return 10 ** (moneyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2);
}

/** A price in currency units (a plan's monthly price): 20 USD → "$20.00". */
export function formatPrice(amount: number, currency: string): string {
  return moneyFormat(currency).format(amount);
}

/** Stripe's integer minor units as money: 1000 USD → "$10.00". */
export function formatMoney(amountMinor: number, currency: string): string {
  return moneyFormat(currency).format(amountMinor / minorPerUnit(currency));
}

const PAYMENT_KINDS: Record<string, string> = {
  top_up: 'Top-up',
  subscription: 'Subscription',
  auto_recharge: 'Auto-recharge',
};

/** A payment's kind in words; kinds added later still read sensibly. */
export function formatPaymentKind(kind: string): string {
  return PAYMENT_KINDS[kind] ?? formatPlanName(kind.replace(/_/g, ' '));
}

/** A price multiplier in parts per million, for people: "As configured", "× 1.2 (20 % more)", "× 0.9 (10 % off)". */
export function formatMultiplier(ppm: number): string {
  const factor = ppm / 1_000_000;
  if (ppm === 1_000_000) return 'As configured';
  const percent = Math.round(Math.abs(factor - 1) * 100 * 100) / 100;
  return `× ${factor} (${percent} % ${factor > 1 ? 'more' : 'off'})`;
}
