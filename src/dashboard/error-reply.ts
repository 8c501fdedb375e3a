// Errors of the dashboard's JSON API in lmgate's unified body. Everything the API also
// knows (401, 400 bad JSON, 415, 429 with Retry-After, 500) is rendered by
// http/error-reply.ts; only what differs is decided here.
import { ValidationError } from '../errors.js';
import { renderError, type ErrorReply } from '../http/error-reply.js';
import { DashboardError } from './dashboard-error.js';

export function renderDashboardError(err: unknown, requestId: string): ErrorReply {
  if (err instanceof DashboardError) {
    return { status: err.status, headers: {}, body: { error: { message: err.message, code: err.status, request_id: requestId } } };
  }
  const reply = renderError(err, requestId);
  if (err instanceof ValidationError) {
    // The dashboard's forms want one entry per message, each naming its field.
    reply.body.errors = Object.entries(err.fields).flatMap(([field, messages]) => messages.map((message) => ({ field, message })));
  }
  return reply;
}
