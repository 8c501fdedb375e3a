// The Responses API's answer written from a chat backend's, for a model whose upstreams do
// not speak the API: one `response` object holding one assistant message with one
// output_text part, and, streamed, its typed events, written as the chat chunks arrive.
// Usage in its own names (input_tokens, output_tokens).
import type { Usage } from '../billing/usage.js';
import { randomBase62 } from '../ids.js';
import type { ChunkSink, NamedEventSink } from '../models/backend.js';
import { readChatChunk, readChatCompletion } from '../models/chat-answer.js';
import { unixSecNow } from '../models/openai-body.js';
import type { ResponseSettings } from './responses-request.js';
import { responseUsageJson } from './response-wire.js';

type Status = 'in_progress' | 'completed' | 'incomplete';

/** Where an answer is: what has been written, and why it ended. */
interface Progress {
  text: string;
  /** The chat finish reason; `length` makes the response incomplete. */
  finishReason: string | null;
}

/** One response's ids, time and settings, shared by its body and its events. */
export class ResponseShape {
  readonly id = `resp_${randomBase62(40)}`;
  readonly messageId = `msg_${randomBase62(40)}`;
  readonly createdAtUnixSec = unixSecNow();

  constructor(
    private readonly modelId: string,
    private readonly settings: ResponseSettings,
  ) {}

  /** The `response` object; `usage` once it has ended. */
  response(status: Status, output: unknown[], usage: Usage | null, finishReason: string | null): Record<string, unknown> {
    const { settings } = this;
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAtUnixSec,
      status,
      background: false,
      error: null,
      incomplete_details: status === 'incomplete' ? { reason: finishReason === 'length' ? 'max_output_tokens' : 'content_filter' } : null,
      instructions: settings.instructions,
      max_output_tokens: settings.maxOutputTokens,
      model: this.modelId,
      output,
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: settings.temperature ?? 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: settings.topP ?? 1,
      truncation: 'disabled',
      usage: usage && responseUsageJson(usage),
      user: settings.user,
      metadata: settings.metadata,
    };
  }

  message(status: Status, text: string | null): Record<string, unknown> {
    return { id: this.messageId, type: 'message', status, role: 'assistant', content: text === null ? [] : [textPart(text)] };
  }
}

export function statusAfter(finishReason: string | null): Status {
  return finishReason === 'length' || finishReason === 'content_filter' ? 'incomplete' : 'completed';
}

/** The whole response, from the chat.completion text a backend answered. */
export function responseJson(shape: ResponseShape, chatBody: string, usage: Usage): string {
  const first = readChatCompletion(chatBody).choices[0];
  const progress: Progress = { text: first?.text ?? '', finishReason: first?.finishReason ?? null };
  const status = statusAfter(progress.finishReason);
  return JSON.stringify(shape.response(status, [shape.message(status, progress.text)], usage, progress.finishReason));
}

/**
 * A ChunkSink that turns the chat chunks of the first choice into the Responses API's
 * events: the opening ones with the first chunk (so a backend that fails before it still
 * answers with a plain error status), a delta per piece of text, and, from `finish`, the
 * closing ones with the usage.
 */
export class ResponseEventSink implements ChunkSink {
  private sequence = 0;
  private isOpen = false;
  private readonly progress: Progress = { text: '', finishReason: null };

  constructor(
    private readonly events: NamedEventSink,
    private readonly shape: ResponseShape,
  ) {}

  send(json: string): boolean {
    let ready = this.isOpen || this.open();
    for (const choice of readChatChunk(json).choices) {
      if (choice.index !== 0) continue;
      if (choice.finishReason !== null) this.progress.finishReason = choice.finishReason;
      if (choice.text === '') continue;
      this.progress.text += choice.text;
      ready = this.emit({ type: 'response.output_text.delta', item_id: this.shape.messageId, output_index: 0, content_index: 0, delta: choice.text, logprobs: [] });
    }
    return ready;
  }

  drained(): Promise<void> {
    return this.events.drained();
  }

  /** The closing events, once the backend has answered in full. */
  finish(usage: Usage): void {
    if (!this.isOpen) this.open();
    const { shape, progress } = this;
    const status = statusAfter(progress.finishReason);
    const at = { item_id: shape.messageId, output_index: 0, content_index: 0 };
    this.emit({ type: 'response.output_text.done', ...at, text: progress.text, logprobs: [] });
    this.emit({ type: 'response.content_part.done', ...at, part: textPart(progress.text) });
    const item = shape.message(status, progress.text);
    this.emit({ type: 'response.output_item.done', output_index: 0, item });
    const kind = status === 'completed' ? 'response.completed' : 'response.incomplete';
    this.emit({ type: kind, response: shape.response(status, [item], usage, progress.finishReason) });
  }

  private open(): boolean {
    this.isOpen = true;
    const { shape } = this;
    const started = shape.response('in_progress', [], null, null);
    this.emit({ type: 'response.created', response: started });
    this.emit({ type: 'response.in_progress', response: started });
    this.emit({ type: 'response.output_item.added', output_index: 0, item: shape.message('in_progress', null) });
    return this.emit({ type: 'response.content_part.added', item_id: shape.messageId, output_index: 0, content_index: 0, part: textPart('') });
  }

  private emit(event: { type: string } & Record<string, unknown>): boolean {
    return this.events.sendEvent(event.type, JSON.stringify({ ...event, sequence_number: this.sequence++ }));
  }
}

function textPart(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}
