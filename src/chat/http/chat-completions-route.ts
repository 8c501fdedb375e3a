// POST chat/completions: OpenAI's chat request as it is, answered by the model's chat
// backend and sent back as the backend wrote it. The path it shares with every metered
// endpoint (admission, credit, the bill, streaming) is http/metered-route.ts.
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import type { ChatRequest } from '../chat-request.js';
import { planTokens } from '../plan.js';
import { validateChatRequest } from '../validate.js';
import type { BackendCall } from '../../models/backend.js';
import { chatBackendOf } from '../../models/catalog.js';
import { usageChunkJson } from '../../models/openai-body.js';
import { chatBackendCall } from '../../http/chat-call.js';
import { API_ERROR_SURFACE, meteredRoute, type MeteredCall, type MeteredEndpoint } from '../../http/metered-route.js';
import { OPENAI_CHAT_FRAMING } from '../../http/sse.js';

const CHAT_COMPLETIONS: MeteredEndpoint<ChatRequest> = {
  endpoint: 'chat',
  parse: validateChatRequest,
  modelOf: (chat) => chat.model,
  plan: planTokens,
  answer: (call) => chatBackendOf(call.model).complete(backendCall(call)),
  streaming: {
    isStreamed: (chat) => chat.stream === true,
    stream: async (call, events) => {
      const backend = backendCall(call);
      const result = await chatBackendOf(call.model).stream(backend, events);
      // Cut short by the upstream: a client that asked for usage still learns what it was
      // charged, in the usage chunk before the error event.
      if (result.error !== undefined && backend.includeUsage) events.send(usageChunkJson(call.model.id, result.usage, call.chargeMicros(result.usage)));
      return result;
    },
    framing: OPENAI_CHAT_FRAMING,
  },
  errors: API_ERROR_SURFACE,
};

export function chatCompletionsRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/chat/completions', CHAT_COMPLETIONS);
}

function backendCall(call: MeteredCall<ChatRequest>): BackendCall {
  const chat = call.request;
  return chatBackendCall(call, chat, {
    requestText: call.rawJson ?? undefined,
    includeUsage: chat.stream === true && chat.stream_options?.include_usage === true,
  });
}
