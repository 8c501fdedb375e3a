// The one renderer of error bodies: every refusal (Fastify's error and not-found handlers,
// the parser's refusals, the SSE writer, the dashboard) is an error of ours looked up in
// error-table.ts and written in the unified body.
import {
  ClientGoneError,
  HeadersTooLargeError,
  LmgateError,
  MalformedJsonError,
  MalformedRequestError,
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
  UriTooLongError,
  type KnownError,
} from '../errors.js';
import { rowOf, type ErrorRow, type Surface } from './error-table.js';

export { SPEC_MESSAGES, type Surface } from './error-table.js';

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export function renderError(err: unknown, requestId: string, surface: Surface = 'api'): ErrorReply {
  const row = rowOf(knownError(err), surface);
  const error = { ...(row.error ?? { message: row.message, code: row.status }), ...row.extra, request_id: requestId };
  return { status: row.status, headers: { ...row.headers }, body: { error, ...row.body } };
}

/** The same error as a final SSE event, for failures after a stream has started. */
export function renderStreamError(err: unknown, requestId: string): string {
  return JSON.stringify({ error: renderError(err, requestId).body.error });
}

/** The status a request ending with `err` had (for usage records and logs). */
export function statusOf(err: unknown): number {
  return rowOf(knownError(err)).status;
}

/**
 * What the request log says a request ending with `err` was refused for: a 403's (or a key's
 * 429's or 402's) reason, a 422's code with the fields its body names
 * ("validation_failed:messages,temperature"), else the error's code.
 */
export function reasonOf(err: unknown): string {
  const known = knownError(err);
  if (known === undefined) return 'unexpected';
  if (known.code === 'forbidden') return known.reason;
  if (known.code === 'validation_failed') return `${known.code}:${Object.keys(known.fields).join(',')}`;
  return known.code === 'rate_limited' || known.code === 'insufficient_credits' ? (known.reason ?? known.code) : known.code;
}

/** How loudly a request ending with `err` is logged: unexpected errors at error, the rest by their row. */
export function logLevelOf(err: unknown): ErrorRow['log'] {
  return rowOf(knownError(err)).log;
}

/**
 * Ours as it is; Fastify's, Node's and the JSON parser's translated; anything else
 * undefined (a 500). A framework error this table does not name is rendered by its status:
 * a refusal of the request is never an unexpected error.
 */
export function knownError(err: unknown): KnownError | undefined {
  if (err instanceof LmgateError) return err as KnownError;
  if (typeof err !== 'object' || err === null) return undefined;
  const { code, statusCode } = err as { code?: unknown; statusCode?: unknown };
  if (typeof code === 'string' && code in FASTIFY_ERROR_CODES) return FASTIFY_ERROR_CODES[code]!(err);
  // The client closed the connection while its body was being read ("aborted").
  if (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') return new ClientGoneError();
  // JSON parse failures from raw-body parsers.
  if (err instanceof SyntaxError) return new MalformedJsonError(err);
  if (typeof code === 'string' && code.startsWith('FST_ERR_') && typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) return refusalOfStatus(statusCode);
  return undefined;
}

/** A framework refusal of the request, by its status: the nearest of ours. */
function refusalOfStatus(status: number): KnownError {
  switch (status) {
    case 408:
      return new RequestTimeoutError();
    case 413:
      return new PayloadTooLargeError();
    case 414:
      return new UriTooLongError();
    case 415:
      return new UnsupportedMediaTypeError(undefined);
    case 431:
      return new HeadersTooLargeError();
    default:
      return new MalformedRequestError({ kind: 'http' });
  }
}

const FASTIFY_ERROR_CODES: Record<string, (err: { message?: string }) => KnownError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_EMPTY_JSON_BODY: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new UnsupportedMediaTypeError(undefined),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError(),
  FST_ERR_BAD_URL: () => new MalformedRequestError({ kind: 'url' }),
  FST_ERR_MAX_PARAM_LENGTH: () => new UriTooLongError(),
};
