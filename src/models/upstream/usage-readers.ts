// Every provider's usage object, read into lmgate's `Usage` (billing/usage.ts): the one
// place a wire shape's token counts become token kinds. Each reader answers null when the
// counts lmgate bills are not there (the caller then counts, and says so in the basis).
// The pass-through's text reader of OpenAI's usage (wire.ts `textUsage`) reads the same
// members off the text; test/models/upstream-wire.test.ts holds it to `usageOfChat`.
import { splitCacheWrites, type Usage } from '../../billing/usage.js';
import type { AnthropicUsage } from '../../anthropic/messages-wire.js';
import { isCount, isRecord } from './wire.js';

/**
 * OpenAI's `usage` on a chat completion, a legacy completion or a chunk of either: the
 * two totals, with the parts priced apart where it reports them: `prompt_tokens_details.cached_tokens`,
 * `completion_tokens_details.reasoning_tokens`, and `cache_write_tokens` beside cached
 * tokens (OpenRouter's form for providers that charge cache writes), with lmgate's
 * `cache_write_1h_tokens`, the part of them written for an hour.
 */
export function usageOfChat(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = value;
  if (!isCount(promptTokens) || !isCount(completionTokens)) return null;
  const usage: Usage = { promptTokens, completionTokens };
  const prompt = value.prompt_tokens_details;
  if (isRecord(prompt)) {
    if (isCount(prompt.cached_tokens) && prompt.cached_tokens > 0) usage.cachedTokens = prompt.cached_tokens;
    if (isCount(prompt.cache_write_tokens) && prompt.cache_write_tokens > 0) usage.cacheWriteTokens = prompt.cache_write_tokens;
    if (isCount(prompt.cache_write_1h_tokens)) splitCacheWrites(usage, prompt.cache_write_1h_tokens);
  }
  const completion = value.completion_tokens_details;
  if (isRecord(completion) && isCount(completion.reasoning_tokens) && completion.reasoning_tokens > 0) usage.reasoningTokens = completion.reasoning_tokens;
  return usage;
}

/** OpenAI's `usage` on a list of embeddings: its `prompt_tokens`, the only kind it has. */
export function usageOfEmbeddings(value: unknown): Usage | null {
  if (!isRecord(value) || !isCount(value.prompt_tokens)) return null;
  return { promptTokens: value.prompt_tokens, completionTokens: 0 };
}

/** The Responses API's `usage` (its `output_tokens` include reasoning). */
export function usageOfResponse(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const { input_tokens: promptTokens, output_tokens: completionTokens } = value;
  if (!isCount(promptTokens) || !isCount(completionTokens)) return null;
  const usage: Usage = { promptTokens, completionTokens };
  const input = value.input_tokens_details;
  if (isRecord(input) && isCount(input.cached_tokens) && input.cached_tokens > 0) usage.cachedTokens = input.cached_tokens;
  const output = value.output_tokens_details;
  if (isRecord(output) && isCount(output.reasoning_tokens) && output.reasoning_tokens > 0) usage.reasoningTokens = output.reasoning_tokens;
  return usage;
}

/**
 * Anthropic's `usage`, checked before it is read (wire-readers.ts). Anthropic counts cache
 * reads and writes beside `input_tokens`; lmgate's prompt total holds all three, and the
 * parts are priced apart (writes split by lifetime where `cache_creation` says, else taken
 * as 5-minute writes).
 */
export function usageOfAnthropic(usage: Pick<AnthropicUsage, 'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens' | 'cache_creation'>): Usage {
  const written = usage.cache_creation_input_tokens ?? 0;
  const read = usage.cache_read_input_tokens ?? 0;
  const oneHour = Math.min(written, usage.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  const result: Usage = { promptTokens: usage.input_tokens + written + read, completionTokens: usage.output_tokens };
  if (read > 0) result.cachedTokens = read;
  if (written - oneHour > 0) result.cacheWriteTokens = written - oneHour;
  if (oneHour > 0) result.cacheWrite1hTokens = oneHour;
  return result;
}
