// An upstream's Anthropic answers, checked before they are trusted: a message body, or one
// stream event's data. Only what the translation reads is checked; anything more passes.
import type { AnthropicMessage, AnthropicStreamEvent } from './messages-wire.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isOptionalCount(value: unknown): boolean {
  return value === undefined || value === null || isCount(value);
}

function isUsage(value: unknown): boolean {
  return (
    isRecord(value) &&
    isCount(value.input_tokens) &&
    isCount(value.output_tokens) &&
    isOptionalCount(value.cache_creation_input_tokens) &&
    isOptionalCount(value.cache_read_input_tokens)
  );
}

/** A content block lmgate reads (text, tool_use), or any other kind, which it skips. */
function isBlock(value: unknown): boolean {
  if (!isRecord(value) || typeof value.type !== 'string') return false;
  if (value.type === 'text') return typeof value.text === 'string';
  if (value.type === 'tool_use') return typeof value.id === 'string' && typeof value.name === 'string' && isRecord(value.input);
  return true;
}

function isStopReason(value: unknown): boolean {
  return value === null || typeof value === 'string';
}

/** A Messages answer: its content blocks, stop reason and usage. */
export function isAnthropicMessage(value: unknown): value is AnthropicMessage {
  return (
    isRecord(value) &&
    value.type === 'message' &&
    typeof value.id === 'string' &&
    Array.isArray(value.content) &&
    value.content.every(isBlock) &&
    isStopReason(value.stop_reason) &&
    isUsage(value.usage)
  );
}

/** One event's data, parsed and checked; undefined when it is not an event lmgate can read. */
export function parseAnthropicEvent(data: string): AnthropicStreamEvent | undefined {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (!isRecord(event) || typeof event.type !== 'string') return undefined;
  switch (event.type) {
    case 'message_start': {
      const message = event.message;
      return isRecord(message) && typeof message.id === 'string' && isUsage(message.usage) ? (event as AnthropicStreamEvent) : undefined;
    }
    case 'content_block_start':
      return isCount(event.index) && isBlock(event.content_block) ? (event as AnthropicStreamEvent) : undefined;
    case 'content_block_delta': {
      const delta = event.delta;
      if (!isCount(event.index) || !isRecord(delta)) return undefined;
      if (delta.type === 'text_delta' && typeof delta.text !== 'string') return undefined;
      if (delta.type === 'input_json_delta' && typeof delta.partial_json !== 'string') return undefined;
      return event as AnthropicStreamEvent;
    }
    case 'message_delta': {
      const { delta, usage } = event;
      const valid =
        isRecord(delta) &&
        isStopReason(delta.stop_reason) &&
        isRecord(usage) &&
        isCount(usage.output_tokens) &&
        isOptionalCount(usage.input_tokens) &&
        isOptionalCount(usage.cache_creation_input_tokens) &&
        isOptionalCount(usage.cache_read_input_tokens);
      return valid ? (event as AnthropicStreamEvent) : undefined;
    }
    case 'error': {
      const error = event.error;
      return isRecord(error) && typeof error.type === 'string' && typeof error.message === 'string' ? (event as AnthropicStreamEvent) : undefined;
    }
    default: // message_stop, content_block_stop, ping, and kinds added later: nothing to read
      return event as AnthropicStreamEvent;
  }
}
