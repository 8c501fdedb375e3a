// The error family: what went wrong, with the data a renderer needs. How each one is
// written on the wire (message, body shape, headers) lives only in http/error-reply.ts.

export class LmgateError extends Error {
  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Authorization header missing or not of the form `Bearer <key>`. */
export class UnauthenticatedError extends LmgateError {
  constructor(reason: string) {
    super(401, reason);
  }
}

/** Well-formed header, but the key fails its checksum or matches no stored key. */
export class InvalidApiKeyError extends LmgateError {
  constructor() {
    super(401, 'invalid api key');
  }
}

/** The key exists and was revoked. */
export class KeyRevokedError extends LmgateError {
  constructor() {
    super(401, 'key revoked');
  }
}

export type ForbiddenReason = 'account_suspended' | 'subscription_inactive' | 'model_not_in_tier' | 'metrics_not_allowed';

/** Authenticated, but the account may not do this (spec 5.7). */
export class ForbiddenError extends LmgateError {
  constructor(readonly reason: ForbiddenReason) {
    super(403, reason);
  }
}

/** Available balance (balance − open reservations) cannot cover the worst case. */
export class InsufficientCreditsError extends LmgateError {
  constructor(
    readonly neededMicros: number,
    readonly availableMicros: number,
  ) {
    super(402, `needs ${neededMicros} micro-credits, ${availableMicros} available`);
  }
}

export class ModelNotFoundError extends LmgateError {
  constructor(readonly model: string) {
    super(404, `model ${JSON.stringify(model)} not found`);
  }
}

/** No route for this path (on any method). */
export class RouteNotFoundError extends LmgateError {
  constructor(readonly path: string) {
    super(404, `no route for ${path}`);
  }
}

/** The path exists, but not for this method. */
export class MethodNotAllowedError extends LmgateError {
  constructor(readonly allow: string[]) {
    super(405, `method not allowed; allowed: ${allow.join(', ')}`);
  }
}

/** One entry per invalid field, each a list of messages (spec 7, status 422). */
export class ValidationError extends LmgateError {
  constructor(readonly fields: Record<string, string[]>) {
    super(422, `invalid fields: ${Object.keys(fields).join(', ')}`);
  }
}

export class MalformedJsonError extends LmgateError {
  constructor(cause?: unknown) {
    super(400, 'malformed JSON body', { cause });
  }
}

/**
 * The request is not usable HTTP: refused by Node's parser (framing, header syntax), by
 * the router (bad URL encoding), or because a field that may appear once appears twice.
 */
export type MalformedRequestReason =
  | { kind: 'http' }
  | { kind: 'url' }
  | { kind: 'duplicate_header'; header: string }
  | { kind: 'transfer_coding'; coding: string };

export class MalformedRequestError extends LmgateError {
  constructor(readonly reason: MalformedRequestReason) {
    super(400, `malformed request: ${reason.kind}`);
  }
}

/** The body is compressed (Content-Encoding); request bodies are read as they are. */
export class UnsupportedContentEncodingError extends LmgateError {
  constructor(readonly encoding: string) {
    super(415, `unsupported content encoding ${encoding}`);
  }
}

/** The request was not received in full within the server's timeouts. */
export class RequestTimeoutError extends LmgateError {
  constructor() {
    super(408, 'request not received in time');
  }
}

/** The request line (URL), or a path parameter in it, is over its bound. */
export class UriTooLongError extends LmgateError {
  constructor() {
    super(414, 'request URL too long');
  }
}

/** The header section is over Node's header size limit. */
export class HeadersTooLargeError extends LmgateError {
  constructor() {
    super(431, 'request headers too large');
  }
}

export class UnsupportedMediaTypeError extends LmgateError {
  constructor(readonly contentType: string | undefined) {
    super(415, `unsupported content type ${contentType ?? '(none)'}`);
  }
}

/** A bound on a body's structure that it went past (http/json-bounds.ts). */
export interface StructureBound {
  kind: 'json_values' | 'json_depth';
  limit: number;
}

/** The body is over the byte limit, or, when `bound` is set, over a bound on its structure. */
export class PayloadTooLargeError extends LmgateError {
  constructor(readonly bound?: StructureBound) {
    super(413, bound ? `body over the ${bound.kind} limit of ${bound.limit}` : 'body over the configured limit');
  }
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetAtUnixSec: number;
}

export class RateLimitedError extends LmgateError {
  constructor(
    readonly state: RateLimitState,
    readonly retryAfterSec: number,
  ) {
    super(429, `rate limited; retry after ${retryAfterSec}s`);
  }
}

/** An upstream answered with something unusable (5xx, malformed body). */
export class BadUpstreamError extends LmgateError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(502, detail, options);
  }
}

/** No backend could take the request (all deployments down or cooling off). */
export class NoBackendAvailableError extends LmgateError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(503, detail, options);
  }
}

/**
 * Shared mode cannot reach Redis (down, or slower than the command timeout). Metered
 * requests are refused rather than admitted without the shared balance: never an overdraft.
 */
export class SharedStateUnavailableError extends LmgateError {
  constructor(options?: { cause?: unknown }) {
    super(503, 'shared state (Redis) unavailable', options);
  }
}

export class UpstreamTimeoutError extends LmgateError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(504, detail, options);
  }
}

/**
 * The upstream refused the request as bad (4xx). Its message is relayed to the client;
 * everything else about the upstream (address, key) is not.
 */
export class UpstreamRejectedError extends LmgateError {
  constructor(status: number, readonly upstreamMessage: string) {
    super(status, `upstream rejected the request: ${upstreamMessage}`);
  }
}
