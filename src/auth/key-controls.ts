// A key's own controls (KeyControls in store.ts): read from what people type, and checked
// on the request path from the cached key record alone. Each record is compiled once (a
// changed key arrives as a new record), so a check is a comparison, a regular expression
// or a BlockList lookup.
import { BlockList, isIP } from 'node:net';
import { globToRegExp } from '../billing/tiers.js';
import { ForbiddenError, KeyExpiredError, ValidationError } from '../errors.js';
import { parseExpiry } from '../expiry.js';
import type { ApiKeyRecord, CreditPeriod, KeyControls } from '../store/store.js';

const MAX_LIST = 50;
const MAX_PATTERN = 200;
const MAX_RPM = 1_000_000;
/** A billion credits: far above any real limit, far below 2^53 micro-credits. */
const MAX_CREDIT_LIMIT_MICROS = 1_000_000_000 * 1_000_000;
const CREDIT_PERIODS: readonly string[] = ['total', 'month'] satisfies CreditPeriod[];

/** A key made without controls. */
export const NO_CONTROLS: KeyControls = { expiresAt: null, allowedModels: null, allowedIps: null, rpm: null, creditLimit: null };

interface CompiledControls {
  expiresAtMs: number | null;
  models: RegExp[] | null;
  ips: BlockList | null;
}

const compiled = new WeakMap<ApiKeyRecord, CompiledControls>();

function compiledOf(key: ApiKeyRecord): CompiledControls {
  let rules = compiled.get(key);
  if (rules === undefined) {
    const { expiresAt, allowedModels, allowedIps } = key.controls;
    rules = {
      expiresAtMs: expiresAt === null ? null : Date.parse(expiresAt),
      models: allowedModels === null ? null : allowedModels.map(globToRegExp),
      ips: allowedIps === null ? null : blockListOf(allowedIps),
    };
    compiled.set(key, rules);
  }
  return rules;
}

/** With the revocation check: an expired key is refused like a revoked one (401). */
export function assertKeyNotExpired(key: ApiKeyRecord, nowMs = Date.now()): void {
  if (key.controls.expiresAt === null) return;
  const { expiresAtMs } = compiledOf(key);
  if (expiresAtMs !== null && nowMs >= expiresAtMs) throw new KeyExpiredError();
}

/** Beside the tier's model check (403). */
export function assertKeyAllowsModel(key: ApiKeyRecord, modelId: string): void {
  if (key.controls.allowedModels === null) return;
  if (!compiledOf(key).models!.some((pattern) => pattern.test(modelId))) throw new ForbiddenError('key_model_not_allowed');
}

/**
 * Before anything is taken for the request (403). The request's `ip` is Fastify's, which
 * follows server.trust_proxy; it is read only for a key with the control (with a proxy
 * trusted, working it out costs a header parse).
 */
export function assertKeyAllowsIp(key: ApiKeyRecord, request: { readonly ip: string }): void {
  if (key.controls.allowedIps === null) return;
  const address = unmapped(request.ip);
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (!compiledOf(key).ips!.check(address, family)) throw new ForbiddenError('key_ip_not_allowed');
}

/** What a person typed for a key's controls, checked field by field (422). Absent fields stay absent. */
export interface ControlsInput {
  /** `YYYY-MM-DD` (works through that UTC day) or an ISO 8601 time; null or '' for none. */
  expiresAt?: string | null;
  allowedModels?: string[] | null;
  allowedIps?: string[] | null;
  rpm?: number | null;
  /** Micro-credits; null for none. */
  creditLimitMicros?: number | null;
  /** `total` (the default) or `month`; only with creditLimitMicros. */
  creditLimitPeriod?: string;
}

export function parseControls(input: ControlsInput, nowMs = Date.now()): Partial<KeyControls> {
  const fields: Record<string, string[]> = {};
  const controls: Partial<KeyControls> = {};
  const fail = (field: string, message: string) => (fields[field] ??= []).push(message);
  if (input.expiresAt !== undefined) {
    const text = input.expiresAt?.trim() ?? '';
    const expiry = text === '' ? { expiresAt: null } : parseExpiry(text, nowMs);
    if ('expiresAt' in expiry) controls.expiresAt = expiry.expiresAt;
    else fail('expiresAt', expiry.problem === 'past' ? 'The expiry date is already past.' : 'Give a date (YYYY-MM-DD) or an ISO 8601 time.');
  }
  if (input.allowedModels !== undefined) {
    const patterns = listOf(input.allowedModels);
    const bad = patterns?.find((p) => p.length > MAX_PATTERN || /\s/.test(p));
    if (patterns !== null && patterns.length > MAX_LIST) fail('allowedModels', `At most ${MAX_LIST} model patterns.`);
    else if (bad !== undefined) fail('allowedModels', `“${bad.slice(0, 40)}” is not a model id or pattern.`);
    else controls.allowedModels = patterns;
  }
  if (input.allowedIps !== undefined) {
    const ranges = listOf(input.allowedIps);
    const bad = ranges?.find((range) => cidrOf(range) === undefined);
    if (ranges !== null && ranges.length > MAX_LIST) fail('allowedIps', `At most ${MAX_LIST} address ranges.`);
    else if (bad !== undefined) fail('allowedIps', `“${bad.slice(0, 60)}” is not an IP address or CIDR range.`);
    else controls.allowedIps = ranges;
  }
  if (input.rpm !== undefined) {
    if (input.rpm !== null && (!Number.isInteger(input.rpm) || input.rpm < 1 || input.rpm > MAX_RPM)) fail('rpm', `Requests per minute must be a whole number from 1 to ${MAX_RPM}.`);
    else controls.rpm = input.rpm;
  }
  const { creditLimitMicros: micros, creditLimitPeriod: period = 'total' } = input;
  if (micros !== undefined) {
    if (micros !== null && (!Number.isSafeInteger(micros) || micros < 1 || micros > MAX_CREDIT_LIMIT_MICROS)) {
      fail('creditLimitMicros', 'A credit limit must be more than 0 and at most 1,000,000,000 credits.');
    } else if (!CREDIT_PERIODS.includes(period)) fail('creditLimitPeriod', 'A credit limit applies in total or per month.');
    else controls.creditLimit = micros === null ? null : { amountMicros: micros, period: period as CreditPeriod };
  } else if (input.creditLimitPeriod !== undefined) fail('creditLimitMicros', 'Give the credit limit with its period.');
  if (Object.keys(fields).length > 0) throw new ValidationError(fields);
  return controls;
}

/** Trimmed, blanks dropped; an empty list means no control. */
function listOf(items: string[] | null): string[] | null {
  const kept = (items ?? []).map((item) => item.trim()).filter((item) => item !== '');
  return kept.length === 0 ? null : kept;
}

interface Cidr {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8`, `2001:db8::/32`, or one address (a range of one). */
function cidrOf(text: string): Cidr | undefined {
  const [address = '', prefixText, ...rest] = text.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function blockListOf(ranges: string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const cidr = cidrOf(range);
    if (cidr) list.addSubnet(cidr.address, cidr.prefix, cidr.family);
  }
  return list;
}

/** An IPv4 client seen on a dual-stack socket (`::ffff:192.0.2.1`) is matched as IPv4. */
function unmapped(ip: string): string {
  const v4 = ip.startsWith('::ffff:') ? ip.slice(7) : '';
  return isIP(v4) === 4 ? v4 : ip;
}
