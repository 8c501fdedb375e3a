// POST /messages: Anthropic's Messages API, served by any model in the catalogue. The
// request is checked in Anthropic's terms and translated to a chat request, which then
// takes the chat path's steps (model, tier, credit, plan, admission, backend, bill); the
// answer, whole or event by event, is translated back. Errors are Anthropic's shape
// (anthropic-error-reply.ts), the key comes in `x-api-key` or as a Bearer token.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../../services.js';
import { chatCompletionToAnthropic, anthropicUsage } from '../../anthropic/response-translation.js';
import type { ChatChunkBody, ChatCompletionBody } from '../../anthropic/chat-wire.js';
import { anthropicToChatRequest } from '../../anthropic/request-translation.js';
import { ChatToAnthropicStream } from '../../anthropic/stream-translation.js';
import { validateMessagesRequest } from '../../anthropic/validate-request.js';
import { admitRequest, chargeMicros, MeteredRequest } from '../../billing/metering.js';
import { assertKeyAllowsModel } from '../../auth/key-controls.js';
import { assertTierAllowsModel } from '../../billing/tiers.js';
import { planTokens } from '../../chat/plan.js';
import { validateChatRequest } from '../../chat/validate.js';
import { ShuttingDownError, UnsupportedMediaTypeError, ValidationError } from '../../errors.js';
import type { ChunkSink } from '../../models/backend.js';
import { chatBackendOf, type ModelEntry } from '../../models/catalog.js';
import { randomBase62 } from '../../ids.js';
import { renderAnthropicError, sendAnthropicError } from '../anthropic-error-reply.js';
import { AnthropicEventStream } from '../anthropic-sse.js';
import { logFailure } from '../error-handler.js';
import { statusOf } from '../error-reply.js';
import type { InFlight } from '../in-flight.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import { MessagesCall } from './messages-call.js';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };
/** nginx's convention for "client closed the request", used in usage records. */
const CLIENT_CLOSED = 499;
/** Anthropic's versions are dates; its SDKs always send one. */
const ANTHROPIC_VERSION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

export function messagesRoute(api: FastifyInstance, services: AppServices): void {
  api.post('/messages', { config: { admitsRequest: true, acceptsApiKeyHeader: true }, errorHandler: sendAnthropicError }, async (request, reply) => {
    reply.header('request-id', request.id);
    const { key, account, tier } = request.principal!;
    const pass = services.admission.open({ accountId: account.id, tier });
    let model: ModelEntry;
    let call: MessagesCall;
    try {
      requireAnthropicVersion(request);
      const type = request.headers['content-type'];
      if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError(type);
      const chat = validateChatRequest(anthropicToChatRequest(validateMessagesRequest(request.body)));
      model = services.catalog.resolve(chat.model, 'chat');
      assertTierAllowsModel(tier, model.id);
      assertKeyAllowsModel(key, model.id);
      await pass.requireCredit();
      const plan = await planTokens(chat, model);
      const { requests } = await admitRequest(pass, model, plan);
      if (requests) reply.headers(rateLimitHeaders(requests));
      const entry = model;
      call = new MessagesCall(chat, model.id, plan.promptTokens, plan.maxOutputTokens, chat.stream === true, reply, (usage) => chargeMicros(entry, usage, pass.reservedMicros));
    } catch (err) {
      pass.refuse();
      throw err;
    }
    const streamed = call.request.stream === true;
    const metered = new MeteredRequest({ requestId: request.id, accountId: account.id, keyId: key.id, tier, model, streamed }, pass);
    request.admitted = true;
    if (streamed) return streamMessage(request, reply, model, call, metered, services.inFlight);
    return completeMessage(model, call, metered, services.inFlight);
  });
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

/** The whole answer, translated, then the bill. */
async function completeMessage(model: ModelEntry, call: MessagesCall, metered: MeteredRequest, inFlight: InFlight): Promise<object> {
  inFlight.add(call);
  try {
    const result = await chatBackendOf(model).complete(call);
    metered.finish(result.usage, 200, result.finishReason);
    const message = chatCompletionToAnthropic(JSON.parse(result.body) as ChatCompletionBody, model.id);
    // The counts billed, whichever side counted them.
    return { ...message, id: newMessageId(), usage: anthropicUsage(result.usage) };
  } catch (err) {
    metered.finish(NO_USAGE, statusAfter(err, call), null);
    throw call.stopped ? new ShuttingDownError() : err;
  } finally {
    inFlight.delete(call);
  }
}

/** The answer's chat chunks become Anthropic's events as they come; then the bill. */
async function streamMessage(request: FastifyRequest, reply: FastifyReply, model: ModelEntry, call: MessagesCall, metered: MeteredRequest, inFlight: InFlight): Promise<FastifyReply> {
  reply.hijack();
  const res = reply.raw;
  const events = new AnthropicEventStream(res, () => reply.getHeaders() as Record<string, string>);
  const translator = new ChatToAnthropicStream(newMessageId(), model.id, call.promptTokens);
  const sink: ChunkSink = {
    send: (json) => events.send(translator.push(JSON.parse(json) as ChatChunkBody)),
    drained: () => events.drained(),
  };
  inFlight.add(call);
  try {
    const result = await chatBackendOf(model).stream(call, sink);
    const error = call.stopped ? new ShuttingDownError() : result.error;
    const status = error ? statusOf(error) : call.client.aborted ? CLIENT_CLOSED : 200;
    metered.finish(result.usage, status, result.finishReason);
    events.end(error ? [errorEvent(error, request.id)] : translator.end(result.usage));
  } catch (thrown) {
    const err = call.stopped ? new ShuttingDownError() : thrown;
    metered.finish(NO_USAGE, statusAfter(thrown, call), null);
    logFailure(request, err);
    if (events.hasStarted) {
      events.end([errorEvent(err, request.id)]);
    } else if (!res.destroyed) {
      const rendered = renderAnthropicError(err, request.id);
      res.writeHead(rendered.status, { ...(reply.getHeaders() as Record<string, string>), ...rendered.headers, 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(rendered.body));
    }
  } finally {
    inFlight.delete(call);
  }
  return reply;
}

/** Once the status line is gone, a failure is the stream's last event, as Anthropic sends it. */
function errorEvent(err: unknown, requestId: string): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: renderAnthropicError(err, requestId).body.error };
}

function statusAfter(err: unknown, call: MessagesCall): number {
  if (call.stopped) return statusOf(new ShuttingDownError());
  return call.client.aborted ? CLIENT_CLOSED : statusOf(err);
}
