// POST chat/completions: the recipe of the request path, each step delegated to its domain.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../../app.js';
import { assertAccountActive } from '../../auth/accounts.js';
import { planTokens } from '../../chat/plan.js';
import { validateChatRequest } from '../../chat/validate.js';
import { UnsupportedMediaTypeError } from '../../errors.js';
import type { BackendCall } from '../../models/backend.js';
import { renderStreamError } from '../error-reply.js';
import { endEventStream, eventSink, startEventStream } from '../sse.js';

export function chatCompletionsRoute(api: FastifyInstance, services: AppServices): void {
  api.post('/chat/completions', async (request, reply) => {
    const { account } = request.principal!;
    assertAccountActive(account);
    requireJsonBody(request);
    const chat = validateChatRequest(request.body);
    const model = services.catalog.resolve(chat.model);
    const plan = planTokens(chat, model);

    const call: BackendCall = {
      request: chat,
      modelId: model.id,
      promptTokens: plan.promptTokens,
      maxOutputTokens: plan.maxOutputTokens,
      includeUsage: chat.stream === true && chat.stream_options?.include_usage === true,
      signal: abortOnDisconnect(reply),
    };
    if (chat.stream !== true) return (await model.backend.complete(call)).body;

    reply.hijack();
    startEventStream(reply.raw, { 'x-request-id': request.id });
    try {
      const result = await model.backend.stream(call, eventSink(reply.raw));
      endEventStream(reply.raw, result.error && renderStreamError(result.error, request.id));
    } catch (err) {
      // The status line is gone: the failure becomes the stream's last event.
      request.log.error({ err }, 'stream failed');
      endEventStream(reply.raw, renderStreamError(err, request.id));
    }
    return reply;
  });
}

/** The spec's requests carry `Content-Type: application/json`; anything else is 415. */
function requireJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError(type);
}

/** Aborts when the client goes away before the answer is complete. */
function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
