// OpenAI's Responses API `response` object as lmgate reads and writes its parts: usage in
// the API's own names (input_tokens, output_tokens), what ended a response in the chat
// terms of a usage record, and the text a response wrote, for an upstream that reports
// no usage.
import type { Usage } from '../billing/usage.js';
import { isRecord } from '../models/upstream/wire.js';

/** The events that end a streamed response; each carries the whole `response`. */
export const FINAL_RESPONSE_EVENTS: ReadonlySet<string> = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function responseUsageJson(usage: Usage): Record<string, unknown> {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/**
 * Why a response ended, as a chat finish reason (the usage record's vocabulary): cut by
 * max_output_tokens is `length`, a function call `tool_calls`; null when it failed.
 */
export function finishReasonOfResponse(response: Record<string, unknown>): string | null {
  switch (response.status) {
    case 'completed':
      return Array.isArray(response.output) && response.output.some((item) => isRecord(item) && item.type === 'function_call') ? 'tool_calls' : 'stop';
    case 'incomplete': {
      const details = response.incomplete_details;
      return isRecord(details) && details.reason === 'content_filter' ? 'content_filter' : 'length';
    }
    default:
      return null;
  }
}

/** What a response wrote: its output text, refusals, function calls and reasoning summaries. */
export function outputTextOfResponse(response: Record<string, unknown>): string {
  let text = '';
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (!isRecord(item)) continue;
    if (typeof item.name === 'string') text += item.name;
    if (typeof item.arguments === 'string') text += item.arguments;
    for (const part of [...arrayOf(item.content), ...arrayOf(item.summary)]) {
      if (!isRecord(part)) continue;
      if (typeof part.text === 'string') text += part.text;
      if (typeof part.refusal === 'string') text += part.refusal;
    }
  }
  return text;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
