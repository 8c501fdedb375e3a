// The one table of what each error code means on the wire: status, message, extra fields
// and headers, and how loudly it is logged. `ErrorTable` is a record over every code, so
// adding a code to errors.ts without its row here does not compile.
import { microsToCredits } from '../money.js';
import type { InsufficientCreditsError, KnownError, MalformedRequestError, PayloadTooLargeError, SpendReason, UpstreamErrorReport } from '../errors.js';
import type { InvitationRefusal } from '../commands/invitation-refusal.js';
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

export interface ErrorRow {
  status: number;
  message: string;
  /** Fields of `error` beside message, code and request_id. */
  extra?: Record<string, unknown>;
  /** Replaces the unified `error` object (OpenAI's 401 shape for keys). */
  error?: Record<string, unknown>;
  /** Fields beside `error` at the top of the body. */
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** A request ending this way is logged at this level; by default it is not logged. */
  log?: 'debug' | 'warn' | 'error';
}

/** Every error the table renders: errors.ts's family, and the refusals of an invitation (commands/invitation-refusal.ts). */
export type TableError = KnownError | InvitationRefusal;
type TableErrorOf<C extends TableError['code']> = TableError extends infer E ? (E extends TableError ? (C extends E['code'] ? E : never) : never) : never;

export type ErrorTable = { [C in TableError['code']]: (err: TableErrorOf<C>) => ErrorRow };

/** Where an error is shown: the spec's API, the dashboard's forms, or the admin API. */
export type Surface = 'api' | 'dashboard' | 'admin';

const row = (status: number, message: string, more?: Omit<ErrorRow, 'status' | 'message'>): ErrorRow => ({ status, message, ...more });

const UNEXPECTED: ErrorRow = row(500, SPEC_MESSAGES[500], { log: 'error' });

export const API_ERRORS: ErrorTable = {
  unauthenticated: () => row(401, SPEC_MESSAGES[401]),
  // DESIGN.md: a well-formed header with an unknown or revoked key gets OpenAI's 401 shape.
  invalid_api_key: () => openAiAuthentication('invalid_api_key', 'Invalid API key provided.'),
  key_revoked: () => openAiAuthentication('key_revoked', 'This API key has been revoked.'),
  key_expired: () => openAiAuthentication('key_expired', 'This API key has expired.', { reason: 'key_expired' }),
  forbidden: (err) => row(403, SPEC_MESSAGES[403], { extra: { reason: err.reason } }),
  insufficient_credits: (err) => row(402, SPEC_MESSAGES[402], { extra: creditFigures(err) }),
  model_not_found: () => row(404, SPEC_MESSAGES[404]),
  route_not_found: () => row(404, SPEC_MESSAGES[404]),
  method_not_allowed: (err) => row(405, 'Method not allowed.', { headers: { allow: err.allow.join(', ') } }),
  validation_failed: (err) => row(422, SPEC_MESSAGES[422], { body: { errors: err.fields } }),
  malformed_json: () => row(400, 'The request body is not valid JSON.'),
  malformed_request: (err) => row(400, malformedMessage(err)),
  unsupported_content_encoding: () => row(415, 'Content-Encoding must be identity: request bodies are not decompressed.'),
  expectation_failed: () => row(417, 'The Expect header may only be 100-continue.', { headers: { connection: 'close' } }),
  request_timeout: () => row(408, 'The request was not received in time.'),
  uri_too_long: () => row(414, 'The request URL is too long.'),
  headers_too_large: () => row(431, 'The request headers are too large.'),
  unsupported_media_type: () => row(415, 'Content-Type must be application/json.'),
  payload_too_large: (err) => row(413, tooLargeMessage(err)),
  rate_limited: (err) =>
    row(429, SPEC_MESSAGES[429], {
      body: { retry_after: err.retryAfterSec },
      ...(err.reason === undefined ? {} : { extra: { reason: err.reason } }),
      headers: { ...rateLimitHeaders(err.state), 'retry-after': String(err.retryAfterSec) },
    }),
  bad_upstream: (err) =>
    err.upstream === undefined
      ? row(502, 'The model backend returned an invalid response.')
      : row(502, `The model backend answered ${err.upstream.status}: ${err.upstream.message}`, { extra: { upstream: upstreamBody(err.upstream) }, log: 'warn' }),
  attempt_failed: (err) =>
    err.kind === 'timeout' ? row(504, 'The model backend did not answer in time.') : row(502, 'The model backend returned an invalid response.'),
  no_backend_available: () => row(503, 'No model backend is available right now. Please try again later.'),
  upstream_timeout: () => row(504, 'The model backend did not answer in time.'),
  // An OpenAI client reads error.type and error.param: the upstream's are kept there too.
  upstream_rejected: ({ upstream }) =>
    row(upstream.status, upstream.message, { extra: { ...withoutCode(upstream.fields), upstream: upstreamBody(upstream) }, log: 'warn' }),
  shared_state_unavailable: () => row(503, 'The service is briefly unavailable. Please try again shortly.', { headers: { 'retry-after': '1' } }),
  shutting_down: () => row(503, 'The server is restarting. Please retry the request.', { headers: { 'retry-after': '1', connection: 'close' } }),
  // Nobody reads the answer; the status is for the log and the usage record.
  client_gone: () => row(499, 'The client closed the connection.', { log: 'debug' }),
  // Stored responses are not offered: nothing could be referred to later.
  previous_response_id_unsupported: () =>
    row(400, 'Stored responses are not supported: send the whole conversation in input instead of previous_response_id.', { extra: { param: 'previous_response_id' } }),
  store_unsupported: () => row(400, 'Stored responses are not supported: leave store unset or set it to false.', { extra: { param: 'store' } }),
  webhook_signature_invalid: () => row(400, 'The webhook signature is not valid.'),
  // Signed, so it came from Stripe or whoever holds the secret: worth a look, never a 500.
  webhook_event_invalid: () => row(400, 'The webhook body is not a Stripe event lmgate can apply.', { log: 'warn' }),
  payment_provider_failed: () => row(502, 'The payment provider could not complete the request. Please try again.', { log: 'error' }),
  payments_disabled: () => row(404, 'Payments are not enabled.'),
  cross_origin: () => row(403, 'Cross-origin request refused.'),
  csrf_invalid: () => row(403, 'Missing or invalid CSRF token.'),
  unknown_plan: () => row(404, 'Unknown plan.'),
  plan_needs_operator: () => row(403, 'Paid plans are arranged by the operator. Please contact them to subscribe.'),
  code_expired: () => row(410, 'This code has expired.'),
  code_redeemed: () => row(409, 'This code has already been redeemed.'),
  code_unknown: () => row(404, 'Unknown code.'),
  key_not_found: () => row(404, 'Key not found.'),
  receipt_not_found: () => row(404, 'Stripe has no receipt for this payment.'),
  sign_up_closed: () => row(403, 'Sign-up is closed.'),
  wrong_credentials: () => row(401, 'Invalid email or password.'),
  wrong_current_password: () => row(403, 'Current password is incorrect.'),
  reset_link_invalid: () => row(410, 'This link is not valid any more: it was used, it expired, or it was never issued. Ask for a new one.'),
  org_name_taken: () => row(409, 'An organisation with this name already exists.'),
  org_role_required: () => row(403, 'Your role in this organisation does not allow this.'),
  org_last_owner: () => row(409, 'An organisation keeps at least one owner: make someone else owner first.'),
  org_requires_sso: () => row(403, 'This organisation requires single sign-on: sign in with SSO to act for it.'),
  invitation_not_found: () => row(404, 'This invitation does not exist.'),
  invitation_expired: () => row(410, 'This invitation has expired. Ask the organisation for a new one.'),
  invitation_accepted: () => row(410, 'This invitation has already been used.'),
  invitation_declined: () => row(410, 'This invitation was declined.'),
  invitation_revoked: () => row(410, 'This invitation was withdrawn by the organisation.'),
  invitation_email_mismatch: () => row(403, 'This invitation is for another email address: sign in with the address it was sent to.'),
  invitation_already_member: () => row(409, 'This address already belongs to the organisation.'),
  email_taken: () => row(409, 'An account with this email already exists.'),
  balance_would_go_negative: () => row(409, 'The balance cannot go below zero.'),
  not_found_in_store: () => row(404, 'Not found.'),
};

/** The dashboard's variant: where its forms want other words or another shape. */
const DASHBOARD_ERRORS: Partial<ErrorTable> = {
  // The API's 404 says "Model not found."; a dashboard path that does not exist is not a model.
  route_not_found: () => row(404, 'Not found.'),
  // One entry per message, each naming its field, for the forms.
  validation_failed: (err) =>
    row(422, SPEC_MESSAGES[422], {
      body: { errors: Object.entries(err.fields).flatMap(([field, messages]) => messages.map((message) => ({ field, message }))) },
    }),
};

/** The admin API's variant: the API's shapes, but its paths are not models. */
const ADMIN_ERRORS: Partial<ErrorTable> = {
  route_not_found: () => row(404, 'Not found.'),
};

const SURFACES: Record<Surface, Partial<ErrorTable>> = { api: {}, dashboard: DASHBOARD_ERRORS, admin: ADMIN_ERRORS };

/** The row for an error of ours; anything else is an unexpected 500. */
export function rowOf(err: TableError | undefined, surface: Surface = 'api'): ErrorRow {
  if (err === undefined) return UNEXPECTED;
  // The compiler cannot pair a code with its class through a lookup; the table's type does.
  const render = (SURFACES[surface][err.code] ?? API_ERRORS[err.code]) as (err: TableError) => ErrorRow;
  return render(err);
}

function openAiAuthentication(code: string, message: string, extra?: Record<string, unknown>): ErrorRow {
  return row(401, message, { error: { code, message, type: 'authentication_error' }, ...(extra && { extra }) });
}

/**
 * What a 402 adds to the spec's message: the credits the request would hold and those
 * available (required is absent when refused before counting, with nothing available),
 * and when a lower output ceiling would fit, that ceiling and a hint. A key's credit limit
 * is named by `reason`, and its figures are the key's: what is left of its limit.
 */
/** What a 402's `reason` names, in words. */
const LIMIT_NAMES: Record<SpendReason, string> = {
  key_credit_limit: 'the key\'s credit limit',
  member_budget: 'the member\'s monthly budget',
  org_budget: 'the organisation\'s monthly budget',
};

function creditFigures({ neededMicros, availableMicros, maxTokensThatFit, reason }: InsufficientCreditsError): Record<string, unknown> {
  const figures: Record<string, unknown> = {};
  if (reason !== undefined) figures.reason = reason;
  if (neededMicros !== undefined) figures.credits_required = microsToCredits(neededMicros);
  figures.credits_available = microsToCredits(availableMicros);
  if (maxTokensThatFit !== undefined) {
    figures.max_tokens_that_fit = maxTokensThatFit;
    figures.hint =
      'The request holds credits for the most output it may write (its max_tokens, or the model\'s maximum when unset). ' +
      `With max_tokens (or max_completion_tokens) of ${maxTokensThatFit} or less it would fit ${reason === undefined ? 'the balance' : `what is left of ${LIMIT_NAMES[reason]}`}.`;
  }
  return figures;
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
  if (reason.kind === 'missing_host') return 'An HTTP/1.1 request must carry a Host header.';
  return 'The request is not valid HTTP.';
}

/** What the upstream said, as `error.upstream`: marked as its own, beside lmgate's words. */
function upstreamBody(upstream: UpstreamErrorReport): Record<string, unknown> {
  return { status: upstream.status, message: upstream.message, ...upstream.fields };
}

/** `error.code` is the HTTP status (spec 7): the upstream's own code stays under `upstream`. */
function withoutCode(fields: Record<string, string | number>): Record<string, string | number> {
  const { code: _code, ...rest } = fields;
  return rest;
}
