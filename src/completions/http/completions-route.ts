// POST completions, the legacy API: a prompt in, text out, whole or streamed. A model
// answers through its chat backend, the prompt as one user message (an upstream is called
// on /chat/completions, which every OpenAI-compatible server has), unless its upstreams
// have their own /completions (`completions: native`): then the request passes through,
// the prompt as it is, without a chat template, and the answer is relayed.
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import { planOutput, planTokens, type TokenPlan } from '../../chat/plan.js';
import { textCompletionJson, TextCompletionSink } from '../completion-body.js';
import { DEFAULT_COMPLETION_MAX_TOKENS, validateCompletionsRequest, type CompletionsRequest } from '../completions-request.js';
import { andThen, type MaybePromise } from '../../maybe-promise.js';
import type { BackendCall } from '../../models/backend.js';
import { chatBackendOf, type ModelEntry } from '../../models/catalog.js';
import { countTextsTokens } from '../../models/tokens.js';
import { withFieldNames } from '../../validation/body-fields.js';
import { chatBackendCall } from '../../http/chat-call.js';
import { API_ERROR_SURFACE, meteredRoute, type MeteredCall, type MeteredEndpoint } from '../../http/metered-route.js';
import { OPENAI_CHAT_FRAMING } from '../../http/sse.js';

const COMPLETIONS: MeteredEndpoint<CompletionsRequest> = {
  endpoint: 'completions',
  parse: validateCompletionsRequest,
  modelOf: (request) => request.chat.model,
  plan: (request, model) => (model.completer === undefined ? withFieldNames({ messages: 'prompt' }, () => planTokens(request.chat, model)) : planPrompt(request, model)),
  answer: (call) => {
    if (call.model.completer !== undefined) return call.model.completer.completeText(passedThrough(call));
    return andThen(chatBackendOf(call.model).complete(chatBackendCall(call, call.request.chat, { includeUsage: false })), (result) => ({
      ...result,
      body: textCompletionJson(result.body, call.model.id, result.usage),
    }));
  },
  streaming: {
    isStreamed: (request) => request.stream,
    stream: async (call, events) => {
      if (call.model.completer !== undefined) return call.model.completer.streamText(passedThrough(call), events);
      const sink = new TextCompletionSink(events, call.model.id);
      const result = await chatBackendOf(call.model).stream(chatBackendCall(call, call.request.chat, { includeUsage: false }), sink);
      if (call.request.includeUsage && result.error === undefined && !call.client.aborted) sink.sendUsage(result.usage);
      return result;
    },
    framing: OPENAI_CHAT_FRAMING,
  },
  errors: API_ERROR_SURFACE,
};

/** The prompt alone, as a server's own /completions counts it: no chat template, learned apart. */
function planPrompt(request: CompletionsRequest, model: ModelEntry): MaybePromise<TokenPlan> {
  return andThen(countTextsTokens([request.prompt], model.contextTokens), (counted) =>
    planOutput(model, counted, request.chat.max_tokens ?? DEFAULT_COMPLETION_MAX_TOKENS, { prompt: 'prompt', maxTokens: 'max_tokens' }, {
      calibration: model.calibrations.of('completions'),
      choices: request.chat.n ?? 1,
    }),
  );
}

/** The client's own request for the upstreams' /completions, with only `model` changed (and usage asked for on a stream). */
function passedThrough(call: MeteredCall<CompletionsRequest>): BackendCall {
  return chatBackendCall(call, call.request.chat, { requestText: call.rawJson ?? undefined, upstreamBody: call.request.body, includeUsage: call.request.includeUsage });
}

export function completionsRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/completions', COMPLETIONS);
}
