// Streams, translated event by event as they arrive: Anthropic's Messages events into
// chat.completion.chunk objects, and chat chunks into Anthropic's events. Each translator
// holds only what the next event needs (the open block, the tool calls' positions, usage).
import type { Usage } from '../billing/usage.js';
import type { ChatChunkBody, ChatFinishReason } from './chat-wire.js';
import type { AnthropicErrorObject, AnthropicStopReason, AnthropicStreamEvent, AnthropicUsage } from './messages-wire.js';
import { anthropicStop, anthropicUsage, chatFinishReason } from './response-translation.js';
import { usageBody } from '../models/openai-body.js';
import { usageOfAnthropic, usageOfChat } from '../models/upstream/usage-readers.js';
import type { UsageMeter } from '../models/upstream/usage-meter.js';

type Delta = ChatChunkBody['choices'][number]['delta'];

/** An `error` event in an Anthropic stream: the upstream gave up after its 200. */
export class AnthropicStreamError extends Error {
  constructor(readonly error: AnthropicErrorObject) {
    super(`${error.type}: ${error.message}`);
  }
}

/**
 * Anthropic events → chat chunks. What the events say about usage (the input at
 * message_start, the output at message_delta) and the text the chunks deliver go to the
 * call's meter, whose usage the final chunk shows.
 */
export class AnthropicToChatStream {
  private id = '';
  /** Chat's position of the tool call each Anthropic block index carries. */
  private readonly toolIndexOfBlock = new Map<number, number>();
  private startUsage: AnthropicUsage | undefined;
  /** message_stop came: the answer is complete. */
  isDone = false;

  constructor(
    private readonly modelId: string,
    private readonly createdUnixSec: number,
    private readonly includeUsage: boolean,
    private readonly meter: UsageMeter,
  ) {}

  /** The chunks for one event (often none). Throws AnthropicStreamError on an `error` event. */
  push(event: AnthropicStreamEvent): ChatChunkBody[] {
    switch (event.type) {
      case 'message_start': {
        this.id = event.message.id;
        this.startUsage = event.message.usage;
        this.meter.reportInput(usageOfAnthropic({ ...event.message.usage, output_tokens: 0 }));
        return [this.chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') return block.text.length > 0 ? [this.text(block.text)] : [];
        if (block.type !== 'tool_use') return [];
        const index = this.toolIndexOfBlock.size;
        this.toolIndexOfBlock.set(event.index, index);
        const args = Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
        this.meter.text(0, block.name + args);
        return [this.chunk({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: args } }] })];
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta') return delta.text.length > 0 ? [this.text(delta.text)] : [];
        const index = this.toolIndexOfBlock.get(event.index);
        if (delta.type !== 'input_json_delta' || index === undefined || delta.partial_json.length === 0) return [];
        this.meter.text(0, delta.partial_json);
        return [this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
      }
      case 'message_delta': {
        const usage = event.usage;
        // Newer servers repeat the input counts here; they are the final ones.
        // (message_start alone splits the cache writes by lifetime.)
        if (usage.input_tokens != null) this.meter.reportInput(usageOfAnthropic({ cache_creation: this.startUsage?.cache_creation, ...usage, input_tokens: usage.input_tokens, output_tokens: 0 }));
        this.meter.reportOutput(usage.output_tokens);
        const finishReason = chatFinishReason(event.delta.stop_reason);
        if (finishReason === null) return [];
        this.meter.finish(0, finishReason);
        const finish = this.chunk({}, finishReason);
        if (event.delta.stop_reason === 'stop_sequence' && event.delta.stop_sequence != null) finish.choices[0]!.stop_reason = event.delta.stop_sequence;
        return [finish];
      }
      case 'message_stop': {
        this.isDone = true;
        if (!this.includeUsage || !this.meter.isReported) return [];
        return [{ ...this.base(), choices: [], usage: usageBody(this.meter.usage()) }];
      }
      case 'error':
        throw new AnthropicStreamError(event.error);
      default: // ping, content_block_stop, and event types added later
        return [];
    }
  }

  private text(text: string): ChatChunkBody {
    this.meter.text(0, text);
    return this.chunk({ content: text });
  }

  private chunk(delta: Delta, finishReason: ChatFinishReason | null = null): ChatChunkBody {
    return { ...this.base(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
  }

  private base(): Omit<ChatChunkBody, 'choices'> {
    return { id: this.id, object: 'chat.completion.chunk', created: this.createdUnixSec, model: this.modelId };
  }
}

/** Chat chunks → Anthropic events. `end()` closes the message once the chat stream is over. */
export class ChatToAnthropicStream {
  private started = false;
  private nextBlock = 0;
  private open: { block: number; kind: 'text' } | { block: number; kind: 'tool'; toolIndex: number } | null = null;
  private stop: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null } = { stop_reason: null, stop_sequence: null };
  private usage: Usage | undefined;

  constructor(
    private readonly messageId: string,
    private readonly modelId: string,
    /** Input tokens as counted before the call: message_start tells them first. */
    private readonly inputTokens: number,
  ) {}

  push(chunk: ChatChunkBody): AnthropicStreamEvent[] {
    const events: AnthropicStreamEvent[] = [];
    this.start(events);
    if (chunk.usage != null) this.usage = usageOfChat(chunk.usage) ?? { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
    // Anthropic's message has one answer: the first choice's.
    const choice = chunk.choices.find((each) => each.index === 0);
    if (choice === undefined) return events;
    const { content, tool_calls: toolCalls } = choice.delta;
    if (typeof content === 'string' && content.length > 0) {
      if (this.open?.kind !== 'text') this.openBlock(events, { type: 'text', text: '' }, null);
      events.push({ type: 'content_block_delta', index: this.open!.block, delta: { type: 'text_delta', text: content } });
    }
    for (const call of toolCalls ?? []) {
      if (call.id !== undefined) {
        this.openBlock(events, { type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: {} }, call.index);
      }
      const args = call.function?.arguments;
      if (args === undefined || args.length === 0) continue;
      // OpenAI sends one call's arguments before the next call starts; a late piece goes to its own block.
      const block = this.open?.kind === 'tool' && this.open.toolIndex === call.index ? this.open.block : undefined;
      if (block !== undefined) events.push({ type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: args } });
    }
    if (choice.finish_reason !== null) {
      this.closeBlock(events);
      this.stop = anthropicStop(choice.finish_reason, choice.stop_reason);
    }
    return events;
  }

  /**
   * The closing events: the last block's stop, the stop reason and the counts (`usage`, the
   * billed ones, else the stream's own usage chunk), message_stop.
   */
  end(usage: Usage | undefined = this.usage): AnthropicStreamEvent[] {
    const events: AnthropicStreamEvent[] = [];
    this.start(events);
    this.closeBlock(events);
    const counts = usage === undefined ? { output_tokens: 0 } : { ...anthropicUsage(usage) };
    events.push({ type: 'message_delta', delta: this.stop, usage: counts });
    events.push({ type: 'message_stop' });
    return events;
  }

  private start(events: AnthropicStreamEvent[]): void {
    if (this.started) return;
    this.started = true;
    events.push({
      type: 'message_start',
      message: { id: this.messageId, type: 'message', role: 'assistant', model: this.modelId, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: this.inputTokens, output_tokens: 0 } },
    });
  }

  private openBlock(events: AnthropicStreamEvent[], block: Extract<AnthropicStreamEvent, { type: 'content_block_start' }>['content_block'], toolIndex: number | null): void {
    this.closeBlock(events);
    const index = this.nextBlock++;
    this.open = toolIndex === null ? { block: index, kind: 'text' } : { block: index, kind: 'tool', toolIndex };
    events.push({ type: 'content_block_start', index, content_block: block });
  }

  private closeBlock(events: AnthropicStreamEvent[]): void {
    if (this.open === null) return;
    events.push({ type: 'content_block_stop', index: this.open.block });
    this.open = null;
  }
}

