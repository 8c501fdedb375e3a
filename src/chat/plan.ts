// Token budget of a chat request: what the prompt costs and how much output it may ask for.
import { ValidationError } from '../errors.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import type { ModelEntry } from '../models/catalog.js';
import { countPromptTokens } from '../models/tokens.js';
import { requestedMaxTokens, type ChatRequest } from './chat-request.js';

export interface TokenPlan {
  promptTokens: number;
  /** Output ceiling: the client's max tokens, else the model's, capped by the context left. */
  maxOutputTokens: number;
}

/** Synchronous for a short prompt; a long one is counted in slices (see countPromptTokens). */
export function planTokens(request: ChatRequest, model: ModelEntry): MaybePromise<TokenPlan> {
  // Counting stops once the prompt cannot fit: a 4 MB prompt for a 128k context is refused
  // after about 128k tokens of work, not after all of it.
  return andThen(countPromptTokens(request.messages, model.contextTokens), (promptTokens) => planFor(request, model, promptTokens));
}

function planFor(request: ChatRequest, model: ModelEntry, promptTokens: number): TokenPlan {
  const maxTokensField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  return planOutput(model, promptTokens, requestedMaxTokens(request), { prompt: 'messages', maxTokens: maxTokensField });
}

/**
 * The plan of a prompt of `promptTokens` that asks for at most `requested` output tokens:
 * 422 past the context or the model's output limit, on the request's own `fields`.
 */
export function planOutput(model: ModelEntry, promptTokens: number, requested: number | undefined, fields: { prompt: string; maxTokens: string }): TokenPlan {
  if (promptTokens >= model.contextTokens) {
    const used = promptTokens > model.contextTokens ? `more than ${model.contextTokens}` : `${promptTokens}`;
    throw new ValidationError({
      [fields.prompt]: [`The prompt uses ${used} tokens; the model's context length is ${model.contextTokens}.`],
    });
  }
  if (requested !== undefined && requested > model.maxOutputTokens) {
    throw new ValidationError({ [fields.maxTokens]: [`must be <= ${model.maxOutputTokens} for this model`] });
  }
  const maxOutputTokens = Math.min(requested ?? model.maxOutputTokens, model.contextTokens - promptTokens);
  return { promptTokens, maxOutputTokens };
}
