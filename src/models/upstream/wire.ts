// OpenAI's chat wire format, as lmgate reads it from upstreams.
import type { Usage } from '../backend.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An upstream `usage` object, when it has the two counts lmgate bills. */
export function usageOf(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = value;
  if (!isCount(promptTokens) || !isCount(completionTokens)) return null;
  return { promptTokens, completionTokens };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

export function usageBody(usage: Usage): Record<string, number> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** The generated text of a message or a delta: what the model was paid to write. */
export function textOfMessage(message: Record<string, unknown>): string {
  let text = '';
  // reasoning_content: vLLM and DeepSeek reasoning models; reasoning: Ollama.
  for (const field of ['content', 'refusal', 'reasoning_content', 'reasoning']) {
    const value = message[field];
    if (typeof value === 'string') text += value;
  }
  if (Array.isArray(message.tool_calls)) {
    for (const toolCall of message.tool_calls) {
      if (!isRecord(toolCall) || !isRecord(toolCall.function)) continue;
      const { name, arguments: args } = toolCall.function;
      if (typeof name === 'string') text += name;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}

/** OpenAI's `error.message` from an error body, if it has one. */
export function upstreamErrorMessage(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the caller says something generic
  }
  if (!isRecord(parsed)) return undefined;
  const error = parsed.error;
  if (isRecord(error) && typeof error.message === 'string' && error.message.length > 0) return error.message;
  // Some servers (older llama.cpp, FastAPI) answer {"error": "..."} or {"detail": "..."}.
  if (typeof error === 'string' && error.length > 0) return error;
  if (typeof parsed.detail === 'string' && parsed.detail.length > 0) return parsed.detail;
  if (typeof parsed.message === 'string' && parsed.message.length > 0) return parsed.message;
  return undefined;
}

/**
 * `text` (the JSON of `parsed`) with its top-level `model` shown as `modelJson`, without
 * serializing the whole object again: the upstream's `"model":"<name>"` is replaced in
 * place when it occurs exactly once. A quote inside a JSON string is always escaped, so a
 * match is a key, not text; twice (a nested `model` key) or spaced differently, the object
 * is serialized instead. Returns undefined when `parsed` has no string model.
 */
export function spliceModel(text: string, parsed: Record<string, unknown>, modelJson: string): string | undefined {
  if (typeof parsed.model !== 'string') return undefined;
  const needle = `"model":${JSON.stringify(parsed.model)}`;
  const at = text.indexOf(needle);
  if (at === -1 || text.indexOf(needle, at + needle.length) !== -1) return undefined;
  return `${text.slice(0, at)}"model":${modelJson}${text.slice(at + needle.length)}`;
}
