// OpenAI's chat completion answers as objects: what the translation to and from
// Anthropic's Messages API reads and writes (the request side is chat/chat-request.ts).

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatUsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** The credits charged (lmgate's, as OpenRouter reports it). */
  cost?: number;
  /** `cache_write_tokens` counts every cache write; `cache_write_1h_tokens` (lmgate's) the part written for an hour. */
  prompt_tokens_details?: { cached_tokens: number; cache_write_tokens?: number; cache_write_1h_tokens?: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

export interface ChatCompletionBody {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: ChatToolCall[] };
    logprobs: null;
    finish_reason: ChatFinishReason | null;
    /** vLLM's convention, which lmgate follows: the stop sequence that ended the answer. */
    stop_reason?: string | null;
  }[];
  usage: ChatUsageBody;
}

/** A piece of a tool call in a stream: the first names it, the next carry its arguments. */
export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkBody {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ChatToolCallDelta[] };
    logprobs: null;
    finish_reason: ChatFinishReason | null;
    /** On the finishing chunk: the stop sequence that ended the answer (vLLM's convention). */
    stop_reason?: string | null;
  }[];
  usage?: ChatUsageBody | null;
}
