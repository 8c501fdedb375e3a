// What a model backend is to the routes: something that answers a validated chat request
// whole, or streams it chunk by chunk, or embeds texts, or answers the Responses API itself,
// and says how many tokens it used.
import type { ChatRequest } from '../chat/chat-request.js';
import type { EmbeddingsRequest } from '../embeddings/embeddings-request.js';
import type { Usage } from '../billing/usage.js';
import type { LmgateError } from '../errors.js';

export interface BackendCall {
  /** The validated client request (model still lmgate's id). */
  request: ChatRequest;
  /** The same request as the client's JSON text, when at hand (an upstream gets it with only `model` changed). */
  requestText?: string;
  /**
   * The client's Anthropic Messages request, when it came as one: an Anthropic upstream is
   * sent it as it is (cache_control, thinking and whatever else chat cannot say), with only
   * model, max_tokens and stream set.
   */
  anthropicRequest?: Record<string, unknown>;
  /**
   * What an upstream is sent when the text cannot be changed in place, if not `request`:
   * the client's own body where it is passed through in another API (legacy completions).
   */
  upstreamBody?: Record<string, unknown>;
  /** lmgate's model id, shown to the client as `model`. */
  modelId: string;
  /** Prompt tokens as lmgate counted them (used when the backend reports none). */
  promptTokens: number;
  /** Output-token ceiling: the client's max tokens, capped by the model's context. */
  maxOutputTokens: number;
  /** Client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Micro-credits a request that used `usage` is charged, for the `cost` its usage reports. */
  chargeMicros(usage: Usage): number;
  /** Says when the client goes away: stop generating at once. */
  client: ClientLink;
}

/**
 * The client's end of a call. Not an AbortSignal: on the request path an AbortController
 * and its EventTarget listeners cost more than a fast upstream's whole relay.
 */
export interface ClientLink {
  /** True once the client has gone before its answer was complete. */
  readonly aborted: boolean;
  /** Calls `listener` once when the client goes (at once if it has); returns a function that stops listening. */
  onAbort(listener: () => void): () => void;
}

export interface CompletionResult {
  /** The answer's body as JSON text (a `chat.completion`, a `response`, a list of embeddings), sent as it is. */
  body: string;
  usage: Usage;
  /** The first choice's finish reason, for the usage record. */
  finishReason: string | null;
}

/** Where a streaming backend writes each `chat.completion.chunk`, already serialized. */
export interface ChunkSink {
  /** Writes one SSE data event. Returns false when the socket buffer is full. */
  send(json: string): boolean;
  /** Resolves when the socket can take more (or the client has gone). */
  drained(): Promise<void>;
}

/** Where named server-sent events go (`event: <name>`), as the Responses and Messages APIs send them. */
export interface NamedEventSink {
  /** Writes one event. Returns false when the socket buffer is full. */
  sendEvent(name: string, json: string): boolean;
  /** Resolves when the socket can take more (or the client has gone). */
  drained(): Promise<void>;
}

export interface StreamResult {
  /** Tokens generated up to the end, or up to the moment the client disconnected. */
  usage: Usage;
  /** The first choice's finish reason; null when the stream ended early. */
  finishReason: string | null;
  /** Set when the stream failed after it started; the route ends it with an error event. */
  error?: LmgateError;
}

export interface ChatBackend {
  /**
   * The whole answer. A backend that has it at once returns it directly: on the hot path
   * one await costs more than an entire echo answer.
   */
  complete(call: BackendCall): CompletionResult | Promise<CompletionResult>;
  /**
   * Streams chunks into the sink; never writes `[DONE]` (the route does). Rejects, having
   * sent nothing, when it cannot start (the client then gets a plain error response).
   */
  stream(call: BackendCall, sink: ChunkSink): Promise<StreamResult>;
  /** Releases connections (upstream pools) at shutdown. */
  close?(): Promise<void>;
}

/**
 * Answers OpenAI's legacy completions as they are: upstreams that have their own
 * /completions (`completions: native`), the request passed through, the answer relayed.
 */
export interface TextCompletionBackend {
  completeText(call: BackendCall): Promise<CompletionResult>;
  /** The upstream's text_completion chunks into the sink; never writes `[DONE]`. */
  streamText(call: BackendCall, sink: ChunkSink): Promise<StreamResult>;
}

export interface EmbeddingCall {
  request: EmbeddingsRequest;
  /** The client's JSON text, when at hand (an upstream gets it with only `model` changed). */
  requestText?: string;
  /** lmgate's model id, shown to the client as `model`. */
  modelId: string;
  /** Input tokens as lmgate counted them (used when the backend reports none). */
  promptTokens: number;
  client: ClientLink;
}

export interface EmbeddingBackend {
  /** The `list` of embeddings as JSON text, with its usage (finishReason null). */
  embed(call: EmbeddingCall): CompletionResult | Promise<CompletionResult>;
}

export interface ResponsesCall {
  /** The client's Responses API request, checked (`model` still lmgate's id). */
  body: Record<string, unknown>;
  /** The same request as the client's JSON text, when at hand. */
  requestText?: string;
  /** lmgate's model id, shown to the client as `model`. */
  modelId: string;
  /** Prompt tokens as lmgate counted them (used when the backend reports none). */
  promptTokens: number;
  client: ClientLink;
}

/** Answers OpenAI's Responses API as it is: upstreams that speak it, the request passed through. */
export interface ResponsesBackend {
  /** The `response` object as JSON text, with its usage. */
  respond(call: ResponsesCall): Promise<CompletionResult>;
  /** The response's typed events, relayed as they arrive; never ends the stream. */
  streamResponse(call: ResponsesCall, sink: NamedEventSink): Promise<StreamResult>;
}
