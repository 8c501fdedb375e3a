// The one place where the spec's error messages, body shapes and headers live. Fastify's
// error handler, the not-found handler and the SSE writer all render through here.
import {
  BadUpstreamError,
  ForbiddenError,
  InsufficientCreditsError,
  InvalidApiKeyError,
  KeyRevokedError,
  HeadersTooLargeError,
  LmgateError,
  MalformedJsonError,
  MalformedRequestError,
  MethodNotAllowedError,
  ModelNotFoundError,
  NoBackendAvailableError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestTimeoutError,
  RouteNotFoundError,
  SharedStateUnavailableError,
  UnauthenticatedError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
  UriTooLongError,
  UpstreamRejectedError,
  UpstreamTimeoutError,
  ValidationError,
} from '../errors.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

/** Messages fixed by the spec (section 7), word for word. */
export const SPEC_MESSAGES = {
  401: 'Unauthenticated.',
  402: 'Insufficient credits. Please top up your balance to continue.',
  403: 'You do not have permission to access this resource.',
  404: 'Model not found.',
  422: 'Validation failed',
  429: 'Rate limit exceeded',
  500: 'An unexpected error occurred. Please try again later.',
} as const;

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** True when the error is ours or Fastify's and safe to describe; false means "log it, say 500". */
export function isExpectedError(err: unknown): boolean {
  return err instanceof LmgateError || translateFastifyError(err) !== undefined;
}

export function renderError(err: unknown, requestId: string): ErrorReply {
  const known = err instanceof LmgateError ? err : translateFastifyError(err);
  if (!known) return unified(500, SPEC_MESSAGES[500], requestId);

  if (known instanceof InvalidApiKeyError) {
    return authentication('invalid_api_key', 'Invalid API key provided.', requestId);
  }
  if (known instanceof KeyRevokedError) {
    return authentication('key_revoked', 'This API key has been revoked.', requestId);
  }
  if (known instanceof UnauthenticatedError) return unified(401, SPEC_MESSAGES[401], requestId);
  if (known instanceof InsufficientCreditsError) return unified(402, SPEC_MESSAGES[402], requestId);
  if (known instanceof ForbiddenError) return unified(403, SPEC_MESSAGES[403], requestId, { reason: known.reason });
  if (known instanceof ModelNotFoundError || known instanceof RouteNotFoundError) {
    return unified(404, SPEC_MESSAGES[404], requestId);
  }
  if (known instanceof MethodNotAllowedError) {
    const reply = unified(405, 'Method not allowed.', requestId);
    reply.headers.allow = known.allow.join(', ');
    return reply;
  }
  if (known instanceof ValidationError) {
    const reply = unified(422, SPEC_MESSAGES[422], requestId);
    reply.body.errors = known.fields;
    return reply;
  }
  if (known instanceof RateLimitedError) {
    const reply = unified(429, SPEC_MESSAGES[429], requestId);
    reply.body.retry_after = known.retryAfterSec;
    Object.assign(reply.headers, rateLimitHeaders(known.state), { 'retry-after': String(known.retryAfterSec) });
    return reply;
  }
  if (known instanceof MalformedJsonError) return unified(400, 'The request body is not valid JSON.', requestId);
  if (known instanceof UnsupportedMediaTypeError) {
    return unified(415, 'Content-Type must be application/json.', requestId);
  }
  if (known instanceof UnsupportedContentEncodingError) {
    return unified(415, 'Content-Encoding must be identity: request bodies are not decompressed.', requestId);
  }
  if (known instanceof PayloadTooLargeError) return unified(413, tooLargeMessage(known), requestId);
  if (known instanceof MalformedRequestError) return unified(400, malformedMessage(known), requestId);
  if (known instanceof RequestTimeoutError) return unified(408, 'The request was not received in time.', requestId);
  if (known instanceof UriTooLongError) return unified(414, 'The request URL is too long.', requestId);
  if (known instanceof HeadersTooLargeError) return unified(431, 'The request headers are too large.', requestId);
  if (known instanceof UpstreamRejectedError) return unified(known.status, known.upstreamMessage, requestId);
  if (known instanceof BadUpstreamError) return unified(502, 'The model backend returned an invalid response.', requestId);
  if (known instanceof NoBackendAvailableError) {
    return unified(503, 'No model backend is available right now. Please try again later.', requestId);
  }
  if (known instanceof SharedStateUnavailableError) {
    const reply = unified(503, 'The service is briefly unavailable. Please try again shortly.', requestId);
    reply.headers['retry-after'] = '1';
    return reply;
  }
  if (known instanceof UpstreamTimeoutError) return unified(504, 'The model backend did not answer in time.', requestId);
  return unified(known.status, SPEC_MESSAGES[500], requestId);
}

function tooLargeMessage({ bound }: PayloadTooLargeError): string {
  if (bound?.kind === 'json_values') return `The request body holds more than ${bound.limit} JSON objects, arrays and strings.`;
  if (bound?.kind === 'json_depth') return `The request body nests JSON more than ${bound.limit} levels deep.`;
  return 'The request body is too large.';
}

function malformedMessage({ reason }: MalformedRequestError): string {
  if (reason.kind === 'duplicate_header') return `The ${reason.header} header may appear only once.`;
  if (reason.kind === 'url') return 'The request URL is not valid.';
  if (reason.kind === 'transfer_coding') return 'Transfer-Encoding may only be chunked.';
  return 'The request is not valid HTTP.';
}

/** The same error as a final SSE event, for failures after a stream has started. */
export function renderStreamError(err: unknown, requestId: string): string {
  return JSON.stringify({ error: renderError(err, requestId).body.error });
}

function unified(status: number, message: string, requestId: string, extra?: Record<string, unknown>): ErrorReply {
  return { status, headers: {}, body: { error: { message, code: status, ...extra, request_id: requestId } } };
}

/** DESIGN.md: a well-formed header with an unknown or revoked key gets OpenAI's 401 shape. */
function authentication(code: string, message: string, requestId: string): ErrorReply {
  return {
    status: 401,
    headers: {},
    body: { error: { code, message, type: 'authentication_error', request_id: requestId } },
  };
}

const FASTIFY_ERROR_CODES: Record<string, (err: { message?: string }) => LmgateError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_EMPTY_JSON_BODY: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: (err) => new MalformedJsonError(err),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new UnsupportedMediaTypeError(undefined),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError(),
  FST_ERR_BAD_URL: () => new MalformedRequestError({ kind: 'url' }),
  FST_ERR_MAX_PARAM_LENGTH: () => new UriTooLongError(),
};

function translateFastifyError(err: unknown): LmgateError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code in FASTIFY_ERROR_CODES) return FASTIFY_ERROR_CODES[code]!(err);
  // JSON parse failures from raw-body parsers and Node's own http parser errors.
  if (err instanceof SyntaxError) return new MalformedJsonError(err);
  return undefined;
}
