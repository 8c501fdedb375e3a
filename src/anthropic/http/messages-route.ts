// POST /messages: Anthropic's Messages API, served by any model in the catalogue that
// serves chat. The request is checked in Anthropic's terms and translated to a chat
// request, which takes the metered path every endpoint shares (http/metered-route.ts); the
// answer, whole or event by event, is translated back. POST /messages/count_tokens counts
// a request's prompt, unmetered. Every refusal, the API hooks'
// included, is Anthropic's error shape (error-reply.ts), and the key may come
// in `x-api-key` as well as a Bearer token.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppServices } from '../../services.js';
import type { ChatCompletionBody } from '../chat-wire.js';
import { anthropicToChatRequest } from '../request-translation.js';
import { anthropicUsage, chatCompletionToAnthropic } from '../response-translation.js';
import { ChatToAnthropicStream } from '../stream-translation.js';
import { validateMessagesRequest } from '../validate-request.js';
import type { AnthropicRequest } from '../messages-wire.js';
import type { ChatRequest } from '../../chat/chat-request.js';
import type { BackendCall } from '../../models/backend.js';
import { assertKeyAllowsModel } from '../../auth/key-controls.js';
import { assertTierAllowsModel } from '../../billing/tiers.js';
import { planTokens } from '../../chat/plan.js';
import { validateChatRequest } from '../../chat/validate.js';
import { ValidationError } from '../../errors.js';
import { randomBase62 } from '../../ids.js';
import { andThen } from '../../maybe-promise.js';
import { chatBackendOf, type ModelEntry } from '../../models/catalog.js';
import { renderAnthropicError, sendAnthropicError } from './error-reply.js';
import { AnthropicEventSink } from './sse.js';
import { chatBackendCall } from '../../http/chat-call.js';
import { meteredRoute, requireJsonBody, type ErrorSurface, type MeteredCall, type MeteredEndpoint } from '../../http/metered-route.js';

/** Anthropic's versions are dates; its SDKs always send one. */
const ANTHROPIC_VERSION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

const ANTHROPIC_ERRORS: ErrorSurface = {
  render: (err, requestId) => {
    const rendered = renderAnthropicError(err, requestId);
    return { ...rendered, body: { ...rendered.body } };
  },
  // Once the status line is gone, a failure is the stream's last event, as Anthropic sends it.
  streamFrame: (err, requestId) => {
    const event = { type: 'error', error: renderAnthropicError(err, requestId).body.error };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  },
};

/** A Messages request: checked in Anthropic's terms, and as the chat request it is translated to. */
interface MessagesRequest {
  messages: AnthropicRequest;
  chat: ChatRequest;
}

const MESSAGES: MeteredEndpoint<MessagesRequest> = {
  endpoint: 'chat',
  parse: (body) => {
    const messages = validateMessagesRequest(body);
    return { messages, chat: validateChatRequest(anthropicToChatRequest(messages)) };
  },
  modelOf: ({ chat }) => chat.model,
  plan: ({ chat }, model) => planTokens(withinOutputLimit(chat, model), model),
  answer: (call) =>
    andThen(chatBackendOf(call.model).complete(messagesCall(call, false)), (result) => {
      const message = chatCompletionToAnthropic(JSON.parse(result.body) as ChatCompletionBody, call.model.id);
      // The counts billed, whichever side counted them.
      return { ...result, body: JSON.stringify({ ...message, id: newMessageId(), usage: anthropicUsage(result.usage) }) };
    }),
  streaming: {
    isStreamed: ({ chat }) => chat.stream === true,
    stream: async (call, events) => {
      const sink = new AnthropicEventSink(events, new ChatToAnthropicStream(newMessageId(), call.model.id, call.plan.promptTokens));
      // Usage asked for: message_delta reports the counts.
      const result = await chatBackendOf(call.model).stream(messagesCall(call, true), sink);
      if (result.error === undefined && !call.client.aborted) sink.finish(result.usage);
      return result;
    },
    // The stream ends with message_stop, no [DONE].
    framing: { done: '' },
  },
  errors: ANTHROPIC_ERRORS,
};

export function messagesRoute(api: FastifyInstance, services: AppServices): void {
  // A scope of its own, so that its error handler answers every refusal of the route.
  void api.register(async (scope) => {
    scope.setErrorHandler(sendAnthropicError);
    // The API hooks read it: the key may come in `x-api-key`.
    scope.addHook('onRoute', (route) => {
      route.config = { ...route.config, acceptsApiKeyHeader: true };
    });
    scope.addHook('onRequest', (request, reply, done) => {
      // Anthropic's SDKs read the request id from `request-id`.
      reply.header('request-id', request.id);
      done();
    });
    // After the body is read, so that an unreadable body is refused as such first.
    scope.addHook('preValidation', (request, _reply, done) => {
      try {
        requireAnthropicVersion(request);
      } catch (err) {
        return done(err as Error);
      }
      done();
    });
    meteredRoute(scope, services, '/messages', MESSAGES);
    // The prompt's tokens: the upstream's own count where it gives one (count_tokens:
    // native), else the estimate a hold starts from; nothing is generated, nothing charged.
    scope.post('/messages/count_tokens', async (request) => {
      requireJsonBody(request);
      const messages = validateMessagesRequest(withMaxTokens(request.body));
      const chat = validateChatRequest(anthropicToChatRequest(messages));
      const model = services.catalog.resolve(chat.model, 'chat');
      assertTierAllowsModel(request.principal!.tier, model.id);
      assertKeyAllowsModel(request.principal!.key, model.id);
      const { promptTokens } = await planTokens(chat, model);
      const counted = await model.countTokens?.(messages);
      return { input_tokens: counted ?? promptTokens };
    });
  });
}

/** The chat backend's call for a Messages request, the client's own request beside it for an Anthropic upstream. */
function messagesCall(call: MeteredCall<MessagesRequest>, includeUsage: boolean): BackendCall {
  const chat = withinOutputLimit(call.request.chat, call.model);
  return chatBackendCall(call, chat, { includeUsage, anthropicRequest: call.request.messages });
}

/**
 * Anthropic's API requires max_tokens, so its clients always send one, sized for Claude
 * models (Claude Code asks for 32,000 or more): above the model's output limit it asks for
 * as much as the model may write, which is that limit. OpenAI's max_tokens is optional, so
 * a value sent there is the client's own choice, and past the limit a 422 (chat/plan.ts).
 */
function withinOutputLimit(chat: ChatRequest, model: ModelEntry): ChatRequest {
  return chat.max_tokens != null && chat.max_tokens > model.maxOutputTokens ? { ...chat, max_tokens: model.maxOutputTokens } : chat;
}

/** A count has no output: `max_tokens`, which a Messages request requires, is optional here. */
function withMaxTokens(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'max_tokens' in body) return body;
  return { ...body, max_tokens: 1 };
}

function requireAnthropicVersion(request: FastifyRequest): void {
  const version = request.headers['anthropic-version'];
  if (typeof version !== 'string' || !ANTHROPIC_VERSION_PATTERN.test(version)) {
    throw new ValidationError({ 'anthropic-version': ['header is required, a date such as 2023-06-01'] });
  }
}

function newMessageId(): string {
  return `msg_${randomBase62(24)}`;
}
