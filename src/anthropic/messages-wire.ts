// Anthropic's Messages API on the wire (POST /v1/messages): the parts of its request,
// response, stream events and error bodies that lmgate reads or writes. Field names are
// Anthropic's, as its SDK's types declare them; test/anthropic/ checks these shapes
// against those types.


export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export const ANTHROPIC_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

export type AnthropicImageSource =
  | { type: 'base64'; media_type: (typeof ANTHROPIC_IMAGE_TYPES)[number]; data: string }
  | { type: 'url'; url: string };

export interface AnthropicImageBlock {
  type: 'image';
  source: AnthropicImageSource;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | (AnthropicTextBlock | AnthropicImageBlock)[];
  is_error?: boolean;
}

/** A model's reasoning, when extended thinking is on: never shown to chat clients. */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export type AnthropicContentBlockParam = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock;

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: string | AnthropicContentBlockParam[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  /** A JSON Schema of an object. */
  input_schema: { type: 'object'; [keyword: string]: unknown };
}

export type AnthropicToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequest {
  model: string;
  /** Required by Anthropic: it has no default output ceiling. */
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string | AnthropicTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stream?: boolean;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id?: string };
}

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
