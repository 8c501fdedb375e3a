// POST responses, OpenAI's Responses API: text or input items in, one response object out,
// or its typed events streamed. A model whose upstreams speak the API (`responses: native`)
// gets the request as it is and its answer is relayed; every other model answers through
// its chat backend, translated both ways. Stored responses are not offered (400).
import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';
import { andThen } from '../../maybe-promise.js';
import type { ResponsesCall } from '../../models/backend.js';
import { chatBackendOf } from '../../models/catalog.js';
import { ResponseEventSink, ResponseShape, responseJson } from '../response-body.js';
import { planResponse } from '../responses-plan.js';
import { chatOf, validateResponsesRequest, type ResponsesRequest } from '../responses-request.js';
import { chatBackendCall } from '../../http/chat-call.js';
import { renderError } from '../../http/error-reply.js';
import { API_ERROR_SURFACE, meteredRoute, type ErrorSurface, type MeteredCall, type MeteredEndpoint } from '../../http/metered-route.js';

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
  modelOf: (request) => request.model,
  plan: planResponse,
  answer: (call) => {
    const { responder } = call.model;
    if (responder !== undefined) return responder.respond(responsesCall(call));
    const shape = new ResponseShape(call.model.id, call.request.echo);
    return andThen(chatBackendOf(call.model).complete(chatBackendCall(call, chatOf(call.request), { includeUsage: false })), (result) => ({
      ...result,
      body: responseJson(shape, result.body, result.usage),
    }));
  },
  streaming: {
    isStreamed: (request) => request.stream,
    stream: async (call, events) => {
      const { responder } = call.model;
      if (responder !== undefined) return responder.streamResponse(responsesCall(call), events);
      const sink = new ResponseEventSink(events, new ResponseShape(call.model.id, call.request.echo));
      const result = await chatBackendOf(call.model).stream(chatBackendCall(call, chatOf(call.request), { includeUsage: false }), sink);
      if (result.error === undefined && !call.client.aborted) sink.finish(result.usage);
      return result;
    },
    // The stream ends after response.completed, with no [DONE].
    framing: { done: '' },
  },
  errors: RESPONSES_ERRORS,
};

function responsesCall({ request, rawJson, model, plan, client }: MeteredCall<ResponsesRequest>): ResponsesCall {
  return { body: request.body, requestText: rawJson ?? undefined, modelId: model.id, promptTokens: plan.promptTokens, client };
}

export function responsesRoute(api: FastifyInstance, services: AppServices): void {
  meteredRoute(api, services, '/responses', RESPONSES);
}
