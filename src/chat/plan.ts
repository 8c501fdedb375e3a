// Token budget of a request: what its prompt costs and how much output it may ask for.
import { ValidationError } from '../errors.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import type { PromptEstimator, PromptShape } from '../billing/prompt-calibration.js';
import type { ModelEntry } from '../models/catalog.js';
import { countPromptTokens, countTextTokens } from '../models/tokens.js';
import { requestedMaxTokens, type ChatRequest } from './chat-request.js';

export interface TokenPlan {
  /** lmgate's own count of the prompt: texts, tool schemas, response format, message framing. */
  countedTokens: number;
  /** The model server's count of the prompt as best known: lmgate's corrected by what the server reports. */
  promptTokens: number;
  /** What the hold covers for the prompt: the estimate and its margin. */
  holdPromptTokens: number;
  /** Output ceiling of one choice: the client's max tokens, else the model's, capped by the context left. */
  maxOutputTokens: number;
  /** Choices asked for (`n`): each may write up to the ceiling. */
  choices: number;
  /** Where the server's report for this prompt is learned from. */
  calibration: PromptEstimator;
}

/** Synchronous for a short prompt; a long one is counted in slices (see countPromptTokens). */
export function planTokens(request: ChatRequest, model: ModelEntry): MaybePromise<TokenPlan> {
  const calibration = model.calibrations.of(chatShape(request));
  // Counting stops once the prompt cannot fit: a 4 MB prompt for a 128k context is refused
  // after about 128k tokens of work, not after all of it.
  return andThen(countPromptTokens(request.messages, model.contextTokens), (messageTokens) => {
    const counted = messageTokens + requestSchemaTokens(request);
    const maxTokensField = request.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
    return planOutput(model, counted, requestedMaxTokens(request), { prompt: 'messages', maxTokens: maxTokensField }, { calibration, choices: request.n ?? 1 });
  });
}

/** What a chat template adds depends on these: a default system prompt without a system message, a preamble with tools. */
function chatShape(request: ChatRequest): PromptShape {
  const hasTools = (Array.isArray(request.tools) && request.tools.length > 0) || (Array.isArray(request.functions) && request.functions.length > 0);
  const hasSystem = request.messages.some((message) => message.role === 'system' || message.role === 'developer');
  if (hasSystem) return hasTools ? 'chat+system+tools' : 'chat+system';
  return hasTools ? 'chat+tools' : 'chat';
}

/**
 * Tokens a server renders into the prompt beside the messages: tool (and legacy function)
 * definitions and a response format's schema, counted as their JSON text. A template
 * renders them in its own words; the calibration learns the difference.
 */
function requestSchemaTokens(request: ChatRequest): number {
  let tokens = 0;
  if (Array.isArray(request.tools) && request.tools.length > 0) tokens += countTextTokens(JSON.stringify(request.tools));
  if (Array.isArray(request.functions) && request.functions.length > 0) tokens += countTextTokens(JSON.stringify(request.functions));
  const format = request.response_format;
  if (format != null && typeof format === 'object' && 'json_schema' in format && format.json_schema != null) {
    tokens += countTextTokens(JSON.stringify(format.json_schema));
  }
  return tokens;
}

/**
 * The plan of a prompt lmgate counted `counted` tokens of, asking for at most `requested`
 * output tokens per choice: 422 past the context or the model's output limit, on the
 * request's own `fields`. The context is checked against lmgate's count, which a real
 * server's may exceed; the server then refuses it itself.
 */
export function planOutput(
  model: ModelEntry,
  counted: number,
  requested: number | undefined,
  fields: { prompt: string; maxTokens: string },
  { calibration, choices = 1 }: { calibration: PromptEstimator; choices?: number },
): TokenPlan {
  if (counted >= model.contextTokens) {
    const used = counted > model.contextTokens ? `more than ${model.contextTokens}` : `${counted}`;
    throw new ValidationError({
      [fields.prompt]: [`The prompt uses ${used} tokens; the model's context length is ${model.contextTokens}.`],
    });
  }
  if (requested !== undefined && requested > model.maxOutputTokens) {
    throw new ValidationError({ [fields.maxTokens]: [`must be <= ${model.maxOutputTokens} for this model`] });
  }
  const maxOutputTokens = Math.min(requested ?? model.maxOutputTokens, model.contextTokens - counted);
  return {
    countedTokens: counted,
    promptTokens: calibration.estimate(counted),
    holdPromptTokens: calibration.hold(counted),
    maxOutputTokens,
    choices,
    calibration,
  };
}

/** The plan of an input that writes no tokens (embeddings): its count, corrected, and nothing more. */
export function planInput(counted: number, calibration: PromptEstimator): TokenPlan {
  return { countedTokens: counted, promptTokens: calibration.estimate(counted), holdPromptTokens: calibration.hold(counted), maxOutputTokens: 0, choices: 1, calibration };
}
