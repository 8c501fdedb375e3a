// Errors for clients of Anthropic's Messages API (POST /messages): the same error table
// decides status, message and headers, written in Anthropic's body,
// `{"type":"error","error":{"type":...,"message":...},"request_id":...}`, so its SDKs raise
// the error class of the status. Validation failures name their fields in the message.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { anthropicErrorBody } from '../error-types.js';
import type { AnthropicErrorBody } from '../messages-wire.js';
import { keepConnectionAfterUnreadBody, logFailure } from '../../http/error-handler.js';
import { reasonOf, renderError, type ErrorReply } from '../../http/error-reply.js';

export interface AnthropicErrorReply {
  status: number;
  headers: Record<string, string>;
  body: AnthropicErrorBody;
}

export function renderAnthropicError(err: unknown, requestId: string): AnthropicErrorReply {
  const rendered = renderError(err, requestId);
  return { status: rendered.status, headers: rendered.headers, body: anthropicErrorBody(rendered.status, messageOf(rendered), requestId) };
}

/** The route's error handler: every refusal of the route, its hooks' included. */
export function sendAnthropicError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  logFailure(request, err);
  request.failure = reasonOf(err);
  keepConnectionAfterUnreadBody(err, reply);
  const rendered = renderAnthropicError(err, request.id);
  // Anthropic's SDKs read the request id from `request-id`.
  reply.code(rendered.status).headers({ ...rendered.headers, 'request-id': request.id }).send(rendered.body);
}

function messageOf(rendered: ErrorReply): string {
  const error = rendered.body.error as { message?: unknown };
  const message = typeof error.message === 'string' ? error.message : 'Error';
  const fields = rendered.body.errors;
  if (typeof fields !== 'object' || fields === null) return message;
  const details = Object.entries(fields as Record<string, string[]>).map(([field, messages]) => `${field}: ${messages.join('; ')}`);
  return `${message}: ${details.join(', ')}`;
}
