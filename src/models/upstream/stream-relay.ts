// Relays one upstream stream's events to the client: lmgate's model id on every chunk,
// usage kept for the bill and shown only to a client that asked for it.
import type { BackendCall, ChunkSink, StreamResult, Usage } from '../backend.js';
import { countTextTokens } from '../tokens.js';
import { AttemptFailure } from './attempt-failure.js';
import { isRecord, ModelRenamer, textOfMessage, usageBody, usageOf } from './wire.js';

// vLLM and OpenAI put `"usage":null` on every chunk once usage is asked for.
const NULL_USAGE = ',"usage":null';

export class StreamRelay {
  /** Sent text per choice index, counted when the upstream reports no usage. */
  private readonly texts = new Map<number, string>();
  private readonly renamer: ModelRenamer;
  private upstreamUsage: Usage | null = null;
  private finishReason: string | null = null;
  private lastChunk: Record<string, unknown> | null = null;
  sentChunks = 0;
  /** The upstream said `[DONE]`. */
  isDone = false;
  /** Some choice reported its finish_reason. */
  hasFinished = false;

  constructor(
    private readonly call: BackendCall,
    private readonly sink: ChunkSink,
    private readonly where: string,
  ) {
    this.renamer = new ModelRenamer(call.modelId);
  }

  /**
   * Handles one event's data; true when the sink asks to wait for a drain. Each event is
   * parsed (to check it, and for usage and finish reasons) but not serialized again: the
   * text goes out with only `model` (and a hidden `usage`) changed in place.
   */
  relay(data: string): boolean {
    if (data === '[DONE]') {
      this.isDone = true;
      return false;
    }
    if (this.isDone) return false;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (err) {
      throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.where, err);
    }
    if (!isRecord(chunk)) throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.where);
    // vLLM and OpenAI report a failure after the headers as an event carrying `error`.
    if (chunk.error != null && !Array.isArray(chunk.choices)) {
      throw new AttemptFailure('bad_answer', 'upstream reported an error mid-stream', this.where, new Error(JSON.stringify(chunk.error)));
    }
    const usage = usageOf(chunk.usage);
    if (usage !== null) this.upstreamUsage = usage;
    const choices: unknown[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    let text = data;
    if (!this.call.includeUsage && chunk.usage !== undefined) {
      // The usage-only chunk lmgate asked for on its own account.
      if (choices.length === 0 && usage !== null) return false;
      const withoutUsage = chunk.usage === null ? withoutOnce(data, NULL_USAGE) : undefined;
      delete chunk.usage;
      text = withoutUsage ?? JSON.stringify(chunk);
    }
    for (const choice of choices) this.note(choice);
    this.lastChunk = chunk;
    this.sentChunks++;
    return !this.sink.send(this.renamer.rename(text, chunk));
  }

  /** The upstream ended the stream properly. */
  finish(): StreamResult {
    const usage = this.usage();
    if (this.call.includeUsage && this.upstreamUsage === null) {
      // The client asked for usage and the upstream gave none: lmgate's count, in the
      // final chunk OpenAI would have sent.
      const last = this.lastChunk;
      this.sink.send(
        JSON.stringify({
          id: last?.id,
          object: 'chat.completion.chunk',
          created: last?.created ?? Math.floor(Date.now() / 1000),
          model: this.call.modelId,
          choices: [],
          usage: usageBody(usage),
        }),
      );
    }
    return { usage, finishReason: this.finishReason };
  }

  /** The client went away: what it was sent. */
  partial(): StreamResult {
    return { usage: this.usage(), finishReason: null };
  }

  /** Before the first chunk a failure moves on to another deployment; after it, ends the stream. */
  failed(failure: AttemptFailure): StreamResult {
    if (this.sentChunks === 0) throw failure;
    return { usage: this.usage(), finishReason: null, error: failure.toLmgateError() };
  }

  private usage(): Usage {
    if (this.upstreamUsage !== null) return this.upstreamUsage;
    let completionTokens = 0;
    for (const text of this.texts.values()) completionTokens += countTextTokens(text);
    return { promptTokens: this.call.promptTokens, completionTokens };
  }

  private note(choice: unknown): void {
    if (!isRecord(choice)) return;
    const index = typeof choice.index === 'number' ? choice.index : 0;
    if (isRecord(choice.delta)) {
      const text = textOfMessage(choice.delta);
      if (text.length > 0) this.texts.set(index, (this.texts.get(index) ?? '') + text);
    }
    if (typeof choice.finish_reason === 'string') {
      this.hasFinished = true;
      if (index === 0) this.finishReason = choice.finish_reason;
    }
  }
}

/** `text` without `fragment`, when it occurs exactly once; else undefined. */
function withoutOnce(text: string, fragment: string): string | undefined {
  const at = text.indexOf(fragment);
  if (at === -1 || text.indexOf(fragment, at + fragment.length) !== -1) return undefined;
  return text.slice(0, at) + text.slice(at + fragment.length);
}
