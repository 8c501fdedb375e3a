// The validated shape of an OpenAI chat completions request (the fields lmgate reads).
// Validation (chat/validate.ts) guarantees these types; unknown extra fields are kept on
// the object so they can pass through to an upstream untouched.

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ContentPart {
  type: string; // 'text' | 'image_url' | 'input_audio' | 'file' | 'refusal'
  text?: string;
  [extra: string]: unknown;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  [extra: string]: unknown;
}

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  logit_bias?: Record<string, number> | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; [extra: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  temperature?: number | null;
  top_p?: number | null;
  seed?: number | null;
  user?: string;
  [extra: string]: unknown;
}

/** The output-token ceiling the client asked for, if any (max_completion_tokens wins). */
export function requestedMaxTokens(request: ChatRequest): number | undefined {
  return request.max_completion_tokens ?? request.max_tokens ?? undefined;
}

/** Stop sequences as a list (OpenAI accepts one string or up to four). */
export function stopSequences(request: ChatRequest): string[] {
  const stop = request.stop;
  if (stop == null) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0);
}

/** The plain text of a message's content: strings as they are, text parts joined. */
export function textOfContent(content: ChatMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  let text = '';
  for (const part of content) if (typeof part.text === 'string') text += part.text;
  return text;
}
