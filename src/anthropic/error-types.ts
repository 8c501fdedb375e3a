// Anthropic's error body, `{"type":"error","error":{"type":...,"message":...}}`, and its
// error types ↔ HTTP statuses, as Anthropic's API documents them.
import type { AnthropicErrorBody } from './messages-wire.js';

const TYPE_OF_STATUS: ReadonlyMap<number, string> = new Map([
  [400, 'invalid_request_error'],
  [401, 'authentication_error'],
  [402, 'billing_error'],
  [403, 'permission_error'],
  [404, 'not_found_error'],
  [413, 'request_too_large'],
  [429, 'rate_limit_error'],
  [500, 'api_error'],
  [504, 'timeout_error'],
  [529, 'overloaded_error'],
]);

const STATUS_OF_TYPE: ReadonlyMap<string, number> = new Map([...TYPE_OF_STATUS].map(([status, type]) => [type, status]));

/** Anthropic's error type for a status; one it has no word for is a bad request (4xx) or an API error (5xx). */
export function anthropicErrorType(status: number): string {
  const type = TYPE_OF_STATUS.get(status);
  if (type !== undefined) return type;
  // lmgate's own 503s (no backend, draining) are Anthropic's "overloaded": come back later.
  if (status === 503) return 'overloaded_error';
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

/** The status Anthropic answers with for an error type (500 for one it does not document). */
export function statusOfAnthropicErrorType(type: string): number {
  return STATUS_OF_TYPE.get(type) ?? 500;
}

export function anthropicErrorBody(status: number, message: string, requestId?: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message }, ...(requestId !== undefined ? { request_id: requestId } : {}) };
}

