// POST responses, OpenAI's Responses API: text or message items in, one response object
// out, or its typed events streamed. Every model that serves it answers through its chat
// backend; stored responses are not offered (400).
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import { planTokens } from '../../chat/plan.js';
import { andThen } from '../../maybe-promise.js';
import { chatBackendOf } from '../../models/catalog.js';
import { ResponseEventSink, ResponseShape, responseJson } from '../../responses/response-body.js';
import { validateResponsesRequest, type ResponsesRequest } from '../../responses/responses-request.js';
import { withFieldNames } from '../body-fields.js';
import { chatBackendCall } from '../chat-call.js';
import { renderError } from '../error-reply.js';
import { API_ERROR_SURFACE, meteredRoute, type ErrorSurface, type MeteredEndpoint } from '../metered-route.js';

/**
 * Errors before the stream are the spec's unified body. Mid-stream, the Responses API's
 * `error` event, which also carries the unified `error` object: the `openai` client
 * raises an event with `error` as an APIError, as it does for chat.
 */
const RESPONSES_ERRORS: ErrorSurface = {
  render: API_ERROR_SURFACE.render,
  streamFrame: (err, requestId) => {
    const { error } = renderError(err, requestId).body as { error: { message: string; code: number } };
    const event = { type: 'error', code: String(error.code), message: error.message, param: null, error };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  },
};

const RESPONSES: MeteredEndpoint<ResponsesRequest> = {
  endpoint: 'responses',
  parse: validateResponsesRequest,
  modelOf: (request) => request.chat.model,
  plan: (request, model) => withFieldNames({ messages: 'input', max_tokens: 'max_output_tokens' }, () => planTokens(request.chat, model)),
  answer: (call) => {
    const shape = new ResponseShape(call.model.id, call.request.echo);
    return andThen(chatBackendOf(call.model).complete(chatBackendCall(call, call.request.chat, { includeUsage: false })), (result) => ({
      ...result,
      body: responseJson(shape, result.body, result.usage),
    }));
  },
  streaming: {
    isStreamed: (request) => request.stream,
    stream: async (call, events) => {
      const sink = new ResponseEventSink(events, new ResponseShape(call.model.id, call.request.echo));
      const result = await chatBackendOf(call.model).stream(chatBackendCall(call, call.request.chat, { includeUsage: false }), sink);
      if (result.error === undefined && !call.client.aborted) sink.finish(result.usage);
      return result;
    },
    // The stream ends after response.completed, with no [DONE].
    framing: { done: '' },
  },
  errors: RESPONSES_ERRORS,
};

export function responsesRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/responses', RESPONSES);
}
