// Relays one upstream stream's events to the client: lmgate's model id on every chunk,
// usage kept for the bill and shown only to a client that asked for it.
import type { Usage } from '../../billing/usage.js';
import type { BackendCall, ChunkSink, StreamResult } from '../backend.js';
import { countTextTokens } from '../tokens.js';
import { AttemptFailure } from '../../errors.js';
import { HeldEvents } from './held-events.js';
import { isPlainObject, isRecord, ModelRenamer, parsedOrNull, textFinishReason, textIndexIsZero, textOfMessage, textUsage, textWithUsageCost, usageOf } from './wire.js';
import { usageBody } from '../openai-body.js';
import { formatCredits, microsToCredits } from '../../billing/money.js';

// vLLM and OpenAI put `"usage":null` on every chunk once usage is asked for.
const NULL_USAGE = ',"usage":null';

export class StreamRelay {
  /** Generated text per choice index, for an upstream that reports no usage. */
  private readonly texts = new Map<number, string>();
  /** Events relayed but not yet read for their text: only counted if no usage comes. */
  private readonly uncounted = new HeldEvents((chunk) => this.noteTexts(chunk));
  private readonly renamer: ModelRenamer;
  private upstreamUsage: Usage | null = null;
  private finishReason: string | null = null;
  private lastEvent: string | null = null;
  sentChunks = 0;
  /** The upstream said `[DONE]`. */
  isDone = false;
  /** Some choice reported its finish_reason. */
  hasFinished = false;

  constructor(
    private readonly call: BackendCall,
    private readonly sink: ChunkSink,
    private readonly where: string,
    upstreamModel: string,
  ) {
    this.renamer = new ModelRenamer(call.modelId, upstreamModel);
  }

  /**
   * Handles one event's data; true when the sink asks to wait for a drain. The text goes
   * out with only `model` (and a hidden `usage`) changed in place, never serialized again.
   */
  relay(data: string): boolean {
    if (data === '[DONE]') {
      this.isDone = true;
      return false;
    }
    if (this.isDone) return false;
    let text = this.plainChunk(data);
    if (text === undefined) text = this.parsedChunk(data);
    if (text === null) return false;
    this.lastEvent = data;
    if (this.upstreamUsage === null) this.uncounted.hold(data);
    this.sentChunks++;
    return !this.sink.send(text);
  }

  /** The upstream ended the stream properly. */
  finish(): StreamResult {
    const usage = this.usage();
    if (this.call.includeUsage && this.upstreamUsage === null) {
      // The client asked for usage and the upstream gave none: lmgate's count, in the
      // final chunk OpenAI would have sent.
      const last = this.lastEvent === null ? null : parsedOrNull(this.lastEvent);
      this.sink.send(
        JSON.stringify({
          id: last?.id,
          object: 'chat.completion.chunk',
          created: last?.created ?? Math.floor(Date.now() / 1000),
          model: this.call.modelId,
          choices: [],
          usage: usageBody(usage, this.call.chargeMicros(usage)),
        }),
      );
    }
    return { usage, finishReason: this.finishReason };
  }

  /** The client went away: what it was sent. */
  partial(): StreamResult {
    return { usage: this.usage(), finishReason: null };
  }

  /**
   * A chunk read off its text (wire.ts) and relayed without parsing it: a whole object
   * that names the expected model once, whose usage and finish reason can be read. Null:
   * nothing for the client (the usage chunk it did not ask for); undefined: parse it.
   */
  private plainChunk(data: string): string | null | undefined {
    if (!isPlainObject(data)) return undefined;
    const finishReason = textFinishReason(data);
    const usage = textUsage(data);
    if (finishReason === undefined || usage === undefined) return undefined;
    // A finish reason counts for the answer only from the first choice.
    if (finishReason !== null && !textIndexIsZero(data)) return undefined;
    let text = data;
    if (usage !== null) {
      if (!this.call.includeUsage) {
        // The usage-only chunk lmgate asked for on its own account; a rarer form is parsed.
        if (!data.includes('choices":[]')) return undefined;
        this.noteUsage(usage);
        return null;
      }
      const costed = textWithUsageCost(data, formatCredits(this.call.chargeMicros(usage)));
      if (costed === undefined) return undefined;
      text = costed;
    } else if (!this.call.includeUsage) {
      const withoutUsage = withoutOnce(data, NULL_USAGE);
      if (withoutUsage !== undefined) text = withoutUsage;
      else if (data.includes('usage"')) return undefined;
    }
    const renamed = this.renamer.renameText(text);
    if (renamed === undefined) return undefined;
    if (usage !== null) this.noteUsage(usage);
    if (finishReason !== null) this.noteFinishReason(finishReason, 0);
    return renamed;
  }

  /** Any other event, parsed: checked, and read for usage and finish reasons. Null: not for the client. */
  private parsedChunk(data: string): string | null {
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
    if (usage !== null) this.noteUsage(usage);
    const choices: unknown[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    for (const choice of choices) this.noteFinish(choice);
    let text = data;
    if (!this.call.includeUsage && chunk.usage !== undefined) {
      // The usage-only chunk lmgate asked for on its own account.
      if (choices.length === 0 && usage !== null) return null;
      const withoutUsage = chunk.usage === null ? withoutOnce(data, NULL_USAGE) : undefined;
      delete chunk.usage;
      text = withoutUsage ?? JSON.stringify(chunk);
    } else if (usage !== null && isRecord(chunk.usage)) {
      chunk.usage.cost = microsToCredits(this.call.chargeMicros(usage));
      text = JSON.stringify(chunk);
    }
    return this.renamer.rename(text, chunk);
  }

  /** The upstream's count it is: nothing held needs counting. */
  private noteUsage(usage: Usage): void {
    this.upstreamUsage = usage;
    this.uncounted.drop();
  }

  private noteFinish(choice: unknown): void {
    if (!isRecord(choice) || typeof choice.finish_reason !== 'string') return;
    this.noteFinishReason(choice.finish_reason, typeof choice.index === 'number' ? choice.index : 0);
  }

  /** Any choice finishing ends the stream properly; the answer's reason is the first choice's. */
  private noteFinishReason(reason: string, index: number): void {
    this.hasFinished = true;
    if (index === 0) this.finishReason = reason;
  }

  private usage(): Usage {
    if (this.upstreamUsage !== null) return this.upstreamUsage;
    this.uncounted.readAll();
    let completionTokens = 0;
    for (const text of this.texts.values()) completionTokens += countTextTokens(text);
    return { promptTokens: this.call.promptTokens, completionTokens };
  }

  /** The generated text of a chunk's choices, by choice. */
  private noteTexts(chunk: Record<string, unknown>): void {
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isRecord(choice) || !isRecord(choice.delta)) continue;
      const text = textOfMessage(choice.delta);
      if (text.length === 0) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      this.texts.set(index, (this.texts.get(index) ?? '') + text);
    }
  }
}

/** `text` without `fragment`, when it occurs exactly once; else undefined. */
function withoutOnce(text: string, fragment: string): string | undefined {
  const at = text.indexOf(fragment);
  if (at === -1 || text.indexOf(fragment, at + fragment.length) !== -1) return undefined;
  return text.slice(0, at) + text.slice(at + fragment.length);
}
