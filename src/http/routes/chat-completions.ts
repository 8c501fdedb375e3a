// POST chat/completions: the recipe of the request path, each step delegated to its domain.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../../app.js';
import { assertAccountActive } from '../../auth/accounts.js';
import { planTokens } from '../../chat/plan.js';
import { validateChatRequest } from '../../chat/validate.js';
import { UnsupportedMediaTypeError } from '../../errors.js';
import type { BackendCall, ChatBackend } from '../../models/backend.js';
import { renderStreamError } from '../error-reply.js';
import { endEventStream, eventSink, startEventStream } from '../sse.js';

export function chatCompletionsRoute(api: FastifyInstance, services: AppServices): void {
  // Not an async function: an instant answer (echo, cache) goes out without an await,
  // which on this path costs more than the answer itself. Sync throws reach the error
  // handler just like rejections.
  api.post('/chat/completions', (request, reply) => {
    const { account } = request.principal!;
    assertAccountActive(account);
    requireJsonBody(request);
    const chat = validateChatRequest(request.body);
    const model = services.catalog.resolve(chat.model);
    const plan = planTokens(chat, model);

    let signal: AbortSignal | undefined;
    const call: BackendCall = {
      request: chat,
      modelId: model.id,
      promptTokens: plan.promptTokens,
      maxOutputTokens: plan.maxOutputTokens,
      includeUsage: chat.stream === true && chat.stream_options?.include_usage === true,
      // Created on first use: an AbortController and a socket listener cost more than a
      // whole instant answer, and backends that finish synchronously never look.
      get signal() {
        return (signal ??= abortOnDisconnect(reply));
      },
    };
    if (chat.stream === true) return streamCompletion(request, reply, model.backend, call);
    reply.type('application/json; charset=utf-8');
    const answer = model.backend.complete(call);
    return answer instanceof Promise ? answer.then((result) => result.body) : answer.body;
  });
}

async function streamCompletion(request: FastifyRequest, reply: FastifyReply, backend: ChatBackend, call: BackendCall): Promise<FastifyReply> {
  reply.hijack();
  startEventStream(reply.raw, { 'x-request-id': request.id });
  try {
    const result = await backend.stream(call, eventSink(reply.raw));
    endEventStream(reply.raw, result.error && renderStreamError(result.error, request.id));
  } catch (err) {
    // The status line is gone: the failure becomes the stream's last event.
    request.log.error({ err, request_id: request.id }, 'stream failed');
    endEventStream(reply.raw, renderStreamError(err, request.id));
  }
  return reply;
}

/** The spec's requests carry `Content-Type: application/json`; anything else is 415. */
function requireJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError(type);
}

/** Aborts when the client goes away before the answer is complete. */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  if (res.destroyed && !res.writableFinished) controller.abort(new Error('client disconnected'));
  else {
    res.once('close', () => {
      if (!res.writableFinished) controller.abort(new Error('client disconnected'));
    });
  }
  return controller.signal;
}
