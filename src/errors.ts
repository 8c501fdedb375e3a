// The error family: what went wrong, with the data a renderer needs. Each error carries a
// `code` from one union (`ErrorCode`); its status, message and headers live only in the
// table of http/error-table.ts, which the compiler holds to one row per code. The refusals
// of a request's form (its bytes, head and body, before any route) are in request-errors.ts.
import { LmgateError } from './lmgate-error.js';
import {
  HeadersTooLargeError,
  MalformedJsonError,
  MalformedRequestError,
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
  UriTooLongError,
  ExpectationFailedError,
} from './request-errors.js';

export { LmgateError } from './lmgate-error.js';
export * from './request-errors.js';

/** Authorization header missing or not of the form `Bearer <key>`. */
export class UnauthenticatedError extends LmgateError {
  readonly code = 'unauthenticated';

  constructor(reason: string) {
    super(reason);
  }
}

/** Well-formed header, but the key fails its checksum or matches no stored key. */
export class InvalidApiKeyError extends LmgateError {
  readonly code = 'invalid_api_key';

  constructor() {
    super('invalid api key');
  }
}

/** The key exists and was revoked. */
export class KeyRevokedError extends LmgateError {
  readonly code = 'key_revoked';

  constructor() {
    super('key revoked');
  }
}

/** The key's expiry date (its controls) has passed. */
export class KeyExpiredError extends LmgateError {
  readonly code = 'key_expired';

  constructor() {
    super('key expired');
  }
}

/** On the admin API: not_an_operator (a customer's key or session), scope_missing (an admin key without the route's scope). */
export type ForbiddenReason =
  | 'account_suspended'
  | 'subscription_inactive'
  | 'model_not_in_tier'
  | 'metrics_not_allowed'
  | 'key_model_not_allowed'
  | 'key_ip_not_allowed'
  | 'not_an_operator'
  | 'scope_missing';

/** Authenticated, but the account may not do this (spec 5.7). */
export class ForbiddenError extends LmgateError {
  readonly code = 'forbidden';

  constructor(readonly reason: ForbiddenReason) {
    super(reason);
  }
}

/** The limit on spending a 402 names (billing/spend-limit.ts): a key's, a member's budget, an organisation's. */
export type SpendReason = 'key_credit_limit' | 'member_budget' | 'org_budget';

/**
 * Available balance (balance − open reservations) cannot cover the worst case: `neededMicros`
 * (undefined when refused before counting, nothing being available). With `reason`
 * key_credit_limit it was the key's credit limit (its spending and holds), not the account's
 * balance, and `availableMicros` is what is left of the limit.
 */
export class InsufficientCreditsError extends LmgateError {
  readonly code = 'insufficient_credits';
  /** When only the output ceiling was too large: the most output tokens that would fit. */
  readonly maxTokensThatFit: number | undefined;
  readonly reason: SpendReason | undefined;

  constructor(
    readonly neededMicros: number | undefined,
    readonly availableMicros: number,
    details: { maxTokensThatFit?: number; reason?: SpendReason } = {},
  ) {
    super(`needs ${neededMicros ?? 'more than 0'} micro-credits, ${availableMicros} available${details.reason ? ` (${details.reason})` : ''}`);
    this.maxTokensThatFit = details.maxTokensThatFit;
    this.reason = details.reason;
  }
}

export class ModelNotFoundError extends LmgateError {
  readonly code = 'model_not_found';

  constructor(readonly model: string) {
    super(`model ${JSON.stringify(model)} not found`);
  }
}

/** No route for this path (on any method). */
export class RouteNotFoundError extends LmgateError {
  readonly code = 'route_not_found';

  constructor(readonly path: string) {
    super(`no route for ${path}`);
  }
}

/** The path exists, but not for this method. */
export class MethodNotAllowedError extends LmgateError {
  readonly code = 'method_not_allowed';

  constructor(readonly allow: string[]) {
    super(`method not allowed; allowed: ${allow.join(', ')}`);
  }
}

/** One entry per invalid field, each a list of messages (spec 7, status 422). */
export class ValidationError extends LmgateError {
  readonly code = 'validation_failed';

  constructor(readonly fields: Record<string, string[]>) {
    super(`invalid fields: ${Object.keys(fields).join(', ')}`);
  }
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetAtUnixSec: number;
}

export class RateLimitedError extends LmgateError {
  readonly code = 'rate_limited';

  constructor(
    readonly state: RateLimitState,
    readonly retryAfterSec: number,
    /** Set when the limit was the key's own requests per minute, not its account's. */
    readonly reason?: 'key_rate_limit',
  ) {
    super(`rate limited; retry after ${retryAfterSec}s`);
  }
}

/**
 * What an upstream said when it refused or failed a request, relayed to the client marked
 * as the upstream's: its status, its message (redacted of the deployment's address and
 * key), and its own fields beside the message (type, param, and numbers such as
 * llama.cpp's n_prompt_tokens and n_ctx).
 */
export interface UpstreamErrorReport {
  status: number;
  message: string;
  fields: Record<string, string | number>;
}

/** An upstream answered with something unusable (5xx, malformed body); `upstream`: what it said, when it said anything. */
export class BadUpstreamError extends LmgateError {
  readonly code = 'bad_upstream';

  constructor(
    detail: string,
    options?: { cause?: unknown },
    readonly upstream?: UpstreamErrorReport,
  ) {
    super(detail, options);
  }
}

/** No backend could take the request (all deployments down or cooling off). */
export class NoBackendAvailableError extends LmgateError {
  readonly code = 'no_backend_available';

  constructor(detail: string, options?: { cause?: unknown }) {
    super(detail, options);
  }
}

/**
 * Shared mode cannot reach Redis (down, or slower than the command timeout). Metered
 * requests are refused rather than admitted without the shared balance: never an overdraft.
 */
export class SharedStateUnavailableError extends LmgateError {
  readonly code = 'shared_state_unavailable';

  constructor(options?: { cause?: unknown }) {
    super('shared state (Redis) unavailable', options);
  }
}

/**
 * The instance is shutting down: a request that arrives while it drains, or one still
 * running when the drain time is up. Another instance (or this one, restarted) can take it.
 */
export class ShuttingDownError extends LmgateError {
  readonly code = 'shutting_down';

  constructor() {
    super('shutting down');
  }
}

export class UpstreamTimeoutError extends LmgateError {
  readonly code = 'upstream_timeout';

  constructor(detail: string, options?: { cause?: unknown }) {
    super(detail, options);
  }
}

/**
 * The upstream refused the request as bad (4xx). Its message is relayed to the client;
 * everything else about the upstream (address, key) is not.
 */
export class UpstreamRejectedError extends LmgateError {
  readonly code = 'upstream_rejected';

  /** The upstream's own status is relayed as it is; `where` (the deployment) only reaches the log. */
  constructor(
    readonly upstream: UpstreamErrorReport,
    where = 'upstream',
  ) {
    super(`${where} rejected the request: ${upstream.status} ${upstream.message}`);
  }
}

/** The payment provider refused or did not answer a call (a checkout, a charge). */
export class PaymentProviderError extends LmgateError {
  readonly code = 'payment_provider_failed';
}

/** A signed webhook body that is not an event lmgate can apply; the message says why. */
export class WebhookEventInvalidError extends LmgateError {
  readonly code = 'webhook_event_invalid';
}

/** The client went away before its answer was complete: status 499, nobody to tell. */
export class ClientGoneError extends LmgateError {
  readonly code = 'client_gone';

  constructor() {
    super('client disconnected');
  }
}

/**
 * One upstream deployment failed: try another (or, after the first chunk, end the stream).
 * `server_error`: it answered 500 (or another 5xx but 502, 503, 504), which the request
 * itself may have caused: it counts against the deployment's health only as a rate of
 * different requests failing (circuit-breaker.ts).
 */
export type FailureKind = 'unreachable' | 'busy' | 'bad_answer' | 'timeout' | 'server_error';

export class AttemptFailure extends LmgateError {
  readonly code = 'attempt_failed';

  constructor(
    readonly kind: FailureKind,
    /** Safe for a client: says what, never where. */
    readonly detail: string,
    where: string,
    cause?: unknown,
    /** A 429's Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
    /** What the upstream said, when it answered with an error body. */
    readonly upstream?: UpstreamErrorReport,
  ) {
    super(`${where}: ${detail}${upstream ? `: ${upstream.message}` : ''}`, { cause });
  }
}

/**
 * A refusal that carries no data: the dashboard's (a closed sign-up, a wrong password, a
 * redeemed code) or the API's (a parameter not offered). Its words are in the error table.
 */
export type RefusalCode =
  | 'previous_response_id_unsupported'
  | 'store_unsupported'
  | 'cross_origin'
  | 'csrf_invalid'
  | 'unknown_plan'
  | 'payments_disabled'
  | 'webhook_signature_invalid'
  | 'plan_needs_operator'
  | 'code_expired'
  | 'code_redeemed'
  | 'code_unknown'
  | 'key_not_found'
  | 'receipt_not_found'
  | 'sign_up_closed'
  | 'wrong_credentials'
  | 'wrong_current_password'
  | 'reset_link_invalid'
  | 'org_role_required'
  | 'org_last_owner'
  | 'org_requires_sso';

export class Refusal extends LmgateError {
  constructor(readonly code: RefusalCode) {
    super(code.replaceAll('_', ' '));
  }
}

/** A ledger entry would take the balance below zero. */
export class BalanceWouldGoNegativeError extends LmgateError {
  readonly code = 'balance_would_go_negative';

  constructor(
    readonly balanceMicros: number,
    readonly amountMicros: number,
  ) {
    super(`balance ${balanceMicros} cannot take ${amountMicros}`);
  }
}

/** An account with an email another account already has (the unique index decided). */
export class EmailTakenError extends LmgateError {
  readonly code = 'email_taken';

  constructor(readonly email: string) {
    super(`an account with email ${email} exists`);
  }
}

/** An organisation with a name another one has (the unique index decided). */
export class OrgNameTakenError extends LmgateError {
  readonly code = 'org_name_taken';

  constructor(readonly orgName: string) {
    super(`an organisation named ${JSON.stringify(orgName)} exists`);
  }
}

/** A row the operation names does not exist (an account or key deleted by hand, a wrong id). */
export class NotFoundInStoreError extends LmgateError {
  readonly code = 'not_found_in_store';

  constructor(
    what: string,
    readonly ref: string,
  ) {
    super(`no ${what} ${JSON.stringify(ref)}`);
  }
}

/** Every error the table renders; `ErrorCode` is the union of their codes. */
export type KnownError =
  | UnauthenticatedError
  | InvalidApiKeyError
  | KeyRevokedError
  | KeyExpiredError
  | ForbiddenError
  | InsufficientCreditsError
  | ModelNotFoundError
  | RouteNotFoundError
  | MethodNotAllowedError
  | ValidationError
  | MalformedJsonError
  | MalformedRequestError
  | UnsupportedContentEncodingError
  | ExpectationFailedError
  | RequestTimeoutError
  | UriTooLongError
  | HeadersTooLargeError
  | UnsupportedMediaTypeError
  | PayloadTooLargeError
  | RateLimitedError
  | BadUpstreamError
  | NoBackendAvailableError
  | SharedStateUnavailableError
  | ShuttingDownError
  | UpstreamTimeoutError
  | UpstreamRejectedError
  | ClientGoneError
  | PaymentProviderError
  | WebhookEventInvalidError
  | AttemptFailure
  | BalanceWouldGoNegativeError
  | EmailTakenError
  | OrgNameTakenError
  | NotFoundInStoreError
  | Refusal;

export type ErrorCode = KnownError['code'];

/** The error class (or classes) whose code is `C`. */
export type ErrorOf<C extends ErrorCode> = KnownError extends infer E ? (E extends KnownError ? (C extends E['code'] ? E : never) : never) : never;
