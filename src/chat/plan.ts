// Token budget of a chat request: what the prompt costs and how much output it may ask for.
import { ValidationError } from '../errors.js';
import type { ModelEntry } from '../models/catalog.js';
import { countPromptTokens } from '../models/tokens.js';
import { requestedMaxTokens, type ChatRequest } from './chat-request.js';

export interface TokenPlan {
  promptTokens: number;
  /** Output ceiling: the client's max tokens, else the model's, capped by the context left. */
  maxOutputTokens: number;
}

export function planTokens(request: ChatRequest, model: ModelEntry): TokenPlan {
  const promptTokens = countPromptTokens(request.messages);
  if (promptTokens >= model.contextTokens) {
    throw new ValidationError({
      messages: [`The messages use ${promptTokens} tokens; the model's context length is ${model.contextTokens}.`],
    });
  }
  const requested = requestedMaxTokens(request);
  if (requested !== undefined && requested > model.maxOutputTokens) {
    const field = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
    throw new ValidationError({ [field]: [`must be <= ${model.maxOutputTokens} for this model`] });
  }
  const maxOutputTokens = Math.min(requested ?? model.maxOutputTokens, model.contextTokens - promptTokens);
  return { promptTokens, maxOutputTokens };
}
