// Anthropic's Messages API on the wire (POST /v1/messages): the parts of its request,
// response, stream events and error bodies that lmgate reads or writes. Field names are
// Anthropic's, as its SDK's types declare them; test/anthropic/ checks these shapes
// against those types.
//
// The request's types are read off its schema (request-schema.ts), which validate-request.ts
// checks a client's request against.
import type { Static } from '@sinclair/typebox';
import type {
  AnthropicRequestSchema,
  ImageBlock,
  MessageParam,
  TextBlock,
  Tool,
  ToolChoice,
  ToolResultBlock,
  ToolUseBlock,
  UserBlock,
  WrittenMessageParam,
} from './request-schema.js';

export { ANTHROPIC_IMAGE_TYPES } from './request-schema.js';

export type AnthropicTextBlock = Static<typeof TextBlock>;
export type AnthropicImageBlock = Static<typeof ImageBlock>;
export type AnthropicImageSource = AnthropicImageBlock['source'];
export type AnthropicToolUseBlock = Static<typeof ToolUseBlock>;
export type AnthropicToolResultBlock = Static<typeof ToolResultBlock>;

/** A model's reasoning, when extended thinking is on: never shown to chat clients. */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** A block of a user's turn. */
export type AnthropicUserBlockParam = Static<typeof UserBlock>;
export type AnthropicMessageParam = MessageParam;
export type WrittenAnthropicMessageParam = WrittenMessageParam;
export type AnthropicTool = Static<typeof Tool>;
export type AnthropicToolChoice = Static<typeof ToolChoice>;

/** A request as a client sends it, once validate-request.ts has checked it. */
export type AnthropicRequest = Static<typeof AnthropicRequestSchema>;
/** A request as lmgate writes one from a chat request: its turns never hold thinking. */
export type WrittenAnthropicRequest = Omit<AnthropicRequest, 'messages'> & { messages: WrittenMessageParam[] };

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface AnthropicUsage {
  /** Input tokens not read from or written to the prompt cache. */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The cache writes by lifetime, where the API splits them. */
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicThinkingBlock;

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export type AnthropicBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

export interface AnthropicErrorObject {
  type: string;
  message: string;
}

/** One server-sent event's data; its `type` repeats the SSE event name. */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'content_block_start'; index: number; content_block: AnthropicContentBlock }
  | { type: 'content_block_delta'; index: number; delta: AnthropicBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: { output_tokens: number; input_tokens?: number | null; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null };
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: AnthropicErrorObject };

export interface AnthropicErrorBody {
  type: 'error';
  error: AnthropicErrorObject;
  request_id?: string | null;
}
