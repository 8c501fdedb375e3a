// The chat backend's call for a metered request: the chat request a backend answers (the
// client's own, or one translated from another API), with the plan and the client's link.
import type { ChatRequest } from '../chat/chat-request.js';
import type { BackendCall } from '../models/backend.js';
import type { MeteredCall } from './metered-route.js';

export function chatBackendCall<Req>(
  { model, plan, client, chargeMicros }: MeteredCall<Req>,
  chat: ChatRequest,
  options: { requestText?: string; upstreamBody?: Record<string, unknown>; anthropicRequest?: Record<string, unknown>; includeUsage: boolean },
): BackendCall {
  return {
    request: chat,
    requestText: options.requestText,
    upstreamBody: options.upstreamBody,
    anthropicRequest: options.anthropicRequest,
    modelId: model.id,
    promptTokens: plan.promptTokens,
    maxOutputTokens: plan.maxOutputTokens,
    includeUsage: options.includeUsage,
    chargeMicros,
    client,
  };
}
