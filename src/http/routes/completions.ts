// POST completions, the legacy API: a prompt in, text out, whole or streamed. Every model
// that serves it answers through its chat backend, the prompt as one user message; an
// upstream is called on /chat/completions, which every OpenAI-compatible server has.
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import { planTokens } from '../../chat/plan.js';
import { textCompletionJson, TextCompletionSink } from '../../completions/completion-body.js';
import { validateCompletionsRequest, type CompletionsRequest } from '../../completions/completions-request.js';
import { andThen } from '../../maybe-promise.js';
import { chatBackendOf } from '../../models/catalog.js';
import { withFieldNames } from '../body-fields.js';
import { chatBackendCall } from '../chat-call.js';
import { API_ERROR_SURFACE, meteredRoute, type MeteredEndpoint } from '../metered-route.js';
import { OPENAI_CHAT_FRAMING } from '../sse.js';

const COMPLETIONS: MeteredEndpoint<CompletionsRequest> = {
  endpoint: 'completions',
  parse: validateCompletionsRequest,
  modelOf: (request) => request.chat.model,
  plan: (request, model) => withFieldNames({ messages: 'prompt' }, () => planTokens(request.chat, model)),
  answer: (call) =>
    andThen(chatBackendOf(call.model).complete(chatBackendCall(call, call.request.chat, { includeUsage: false })), (result) => ({
      ...result,
      body: textCompletionJson(result.body, call.model.id, result.usage),
    })),
  streaming: {
    isStreamed: (request) => request.stream,
    stream: async (call, events) => {
      const sink = new TextCompletionSink(events, call.model.id);
      const result = await chatBackendOf(call.model).stream(chatBackendCall(call, call.request.chat, { includeUsage: false }), sink);
      if (call.request.includeUsage && result.error === undefined && !call.client.aborted) sink.sendUsage(result.usage);
      return result;
    },
    framing: OPENAI_CHAT_FRAMING,
  },
  errors: API_ERROR_SURFACE,
};

export function completionsRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/completions', COMPLETIONS);
}
