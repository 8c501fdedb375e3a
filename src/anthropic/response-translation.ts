// Chat completion answers ↔ Anthropic messages, both ways: content blocks, stop reasons
// and usage. Pure functions; the stream's pieces (stream-translation.ts) use the same rules.
import type { Usage } from '../billing/usage.js';
import type { ChatCompletionBody, ChatFinishReason, ChatToolCall } from './chat-wire.js';
import type { AnthropicContentBlock, AnthropicMessage, AnthropicStopReason, AnthropicUsage } from './messages-wire.js';
import { parseArguments } from './request-translation.js';
import { usageOfAnthropic, usageOfChat } from '../models/upstream/usage-readers.js';
import { usageBody } from '../models/openai-body.js';

export function chatFinishReason(reason: AnthropicStopReason | null): ChatFinishReason | null {
  switch (reason) {
    case null:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn: the model stopped of its own accord
      return 'stop';
  }
}

export function anthropicStopReason(reason: string | null): AnthropicStopReason | null {
  switch (reason) {
    case null:
      return null;
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/**
 * Why an answer stopped, in Anthropic's words: a chat `stop` with the stop sequence that
 * ended it (vLLM's `stop_reason`, which lmgate's own translations and demo models set too)
 * is `stop_sequence`; a server that does not say which sequence it met (OpenAI, llama.cpp)
 * leaves it `end_turn`.
 */
export function anthropicStop(finishReason: string | null, stopReason: unknown): { stop_reason: AnthropicStopReason | null; stop_sequence: string | null } {
  if (finishReason === 'stop' && typeof stopReason === 'string') return { stop_reason: 'stop_sequence', stop_sequence: stopReason };
  return { stop_reason: anthropicStopReason(finishReason), stop_sequence: null };
}

/** A usage in Anthropic's terms: cache reads and writes beside the plain input. */
export function anthropicUsage(usage: Usage): AnthropicUsage {
  const read = usage.cachedTokens ?? 0;
  const fiveMinutes = usage.cacheWriteTokens ?? 0;
  const oneHour = usage.cacheWrite1hTokens ?? 0;
  const body: AnthropicUsage = { input_tokens: usage.promptTokens - read - fiveMinutes - oneHour, output_tokens: usage.completionTokens };
  if (read > 0 || fiveMinutes + oneHour > 0) {
    body.cache_read_input_tokens = read;
    body.cache_creation_input_tokens = fiveMinutes + oneHour;
  }
  if (oneHour > 0) body.cache_creation = { ephemeral_5m_input_tokens: fiveMinutes, ephemeral_1h_input_tokens: oneHour };
  return body;
}

/** An Anthropic message as a `chat.completion`, named `modelId`. */
export function anthropicToChatCompletion(message: AnthropicMessage, modelId: string, createdUnixSec: number): ChatCompletionBody {
  let text = '';
  let hasText = false;
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      text += block.text;
      hasText = true;
    } else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } });
    }
  }
  const content = hasText || toolCalls.length === 0 ? text : null;
  return {
    id: message.id,
    object: 'chat.completion',
    created: createdUnixSec,
    model: modelId,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: chatFinishReason(message.stop_reason),
        ...(message.stop_reason === 'stop_sequence' && message.stop_sequence != null ? { stop_reason: message.stop_sequence } : {}),
      },
    ],
    usage: usageBody(usageOfAnthropic(message.usage)),
  };
}

/** A `chat.completion` (its first choice) as an Anthropic message, named `modelId`. */
export function chatCompletionToAnthropic(completion: ChatCompletionBody, modelId: string): AnthropicMessage {
  const message = completion.choices[0]?.message;
  const content: AnthropicContentBlock[] = [];
  if (typeof message?.content === 'string' && message.content.length > 0) content.push({ type: 'text', text: message.content });
  for (const call of message?.tool_calls ?? []) {
    // An upstream's arguments that are not an object cannot be Anthropic's `input`: kept as text.
    const input = parseArguments(call.function.arguments) ?? { arguments: call.function.arguments };
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  }
  return {
    id: completion.id.startsWith('msg_') ? completion.id : `msg_${completion.id.replace(/^chatcmpl-/, '')}`,
    type: 'message',
    role: 'assistant',
    model: modelId,
    content,
    ...anthropicStop(completion.choices[0]?.finish_reason ?? null, completion.choices[0]?.stop_reason),
    usage: anthropicUsage(usageOfChat(completion.usage) ?? { promptTokens: completion.usage.prompt_tokens, completionTokens: completion.usage.completion_tokens }),
  };
}
