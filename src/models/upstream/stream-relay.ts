// Relays one upstream stream's events to the client: lmgate's model id on every chunk,
// usage kept for the bill and shown only to a client that asked for it.
import type { BackendCall, ChunkSink, StreamResult } from '../backend.js';
import { AttemptFailure } from '../../errors.js';
import { requestedMaxTokens } from '../../chat/chat-request.js';
import { UsageMeter } from './usage-meter.js';
import { usageOfChat } from './usage-readers.js';
import { isPlainObject, isRecord, ModelRenamer, parsedOrNull, textFinishReason, textIndexIsZero, textOfMessage, textStringMember, textUsage, textWithUsageCost } from './wire.js';
import { usageBody } from '../openai-body.js';
import { formatCredits, microsToCredits } from '../../money.js';

// vLLM and OpenAI put `"usage":null` on every chunk once usage is asked for.
const NULL_USAGE = ',"usage":null';

export class StreamRelay {
  private readonly renamer: ModelRenamer;
  /** The stream's usage: what the upstream reported, and the text delivered where it did not. */
  private readonly meter: UsageMeter;
  /**
   * Several choices (`n` > 1): llama.cpp's server sends one usage-only chunk per choice as
   * each finishes, each with the prompt and that choice's output. They are summed (the
   * prompt once) and the client is sent one usage, with one cost, at the end.
   */
  private readonly perChoiceUsage: boolean;
  /** The last usage-only chunk of a multi-choice stream: its id and created go on the summed one. */
  private lastUsageChunk: Record<string, unknown> | null = null;
  private lastEvent: string | null = null;
  sentChunks = 0;
  /** The upstream said `[DONE]`. */
  isDone = false;

  constructor(
    private readonly call: BackendCall,
    private readonly sink: ChunkSink,
    private readonly where: string,
    upstreamModel: string,
  ) {
    this.renamer = new ModelRenamer(call.modelId, upstreamModel);
    this.perChoiceUsage = (call.request.n ?? 1) > 1;
    this.meter = new UsageMeter({ promptTokens: call.promptTokens, maxTokens: requestedMaxTokens(call.request), perChoiceReports: this.perChoiceUsage });
  }

  /** Some choice reported its finish_reason. */
  get hasFinished(): boolean {
    return this.meter.hasFinished;
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
    let text = this.perChoiceUsage ? undefined : this.plainChunk(data);
    if (text === undefined) text = this.parsedChunk(data);
    if (text === null) return false;
    this.lastEvent = data;
    this.sentChunks++;
    return !this.sink.send(text);
  }

  /** The upstream ended the stream properly. */
  finish(): StreamResult {
    const usage = this.meter.usage();
    if (this.call.includeUsage && this.lastUsageChunk !== null) {
      // The choices' usages, summed, in the form of the upstream's last usage chunk.
      const { id, created, object, system_fingerprint: fingerprint } = this.lastUsageChunk;
      this.sink.send(JSON.stringify({ id, object, created, model: this.call.modelId, system_fingerprint: fingerprint, choices: [], usage: usageBody(usage, this.call.chargeMicros(usage)) }));
    } else if (this.call.includeUsage && !this.meter.hasReport) {
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
    return { usage, finishReason: this.meter.finishReason };
  }

  /** The client went away: what it was sent. */
  partial(): StreamResult {
    return { usage: this.meter.usage(), finishReason: null };
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
        this.meter.report(usage);
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
    if (usage !== null) this.meter.report(usage);
    else if (!this.meter.isReported) this.notePlainText(data);
    if (finishReason !== null) this.meter.finish(0, finishReason);
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
    const usage = usageOfChat(chunk.usage);
    const choices: unknown[] = Array.isArray(chunk.choices) ? chunk.choices : [];
    // The chunk's events in their order: its texts, its finishes, then its usage, which
    // (one choice's, see perChoiceUsage) follows the finish it belongs to.
    this.noteTexts(chunk);
    for (const choice of choices) this.noteFinish(choice);
    if (usage !== null) this.meter.report(usage);
    if (this.perChoiceUsage && usage !== null) {
      // Sent with the others, summed, at the end.
      this.lastUsageChunk = chunk;
      delete chunk.usage;
      if (choices.length === 0) return null;
      return this.renamer.rename(JSON.stringify(chunk), chunk);
    }
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

  /** Any choice finishing ends the stream properly. */
  private noteFinish(choice: unknown): void {
    if (!isRecord(choice) || typeof choice.finish_reason !== 'string') return;
    this.meter.finish(typeof choice.index === 'number' ? choice.index : 0, choice.finish_reason);
  }

  /**
   * The generated text of a chunk relayed unparsed: its one `content`, read off the text
   * when the chunk is the first choice's and carries no other kind of text; else parsed.
   */
  private notePlainText(data: string): void {
    // A legacy completion's chunk carries `text`, not a delta: parsed.
    const hasOtherText = data.includes('refusal"') || data.includes('reasoning') || data.includes('tool_calls"') || data.includes('function_call"') || data.includes('"text"');
    const content = hasOtherText || !textIndexIsZero(data) ? undefined : textStringMember(data, 'content"');
    if (content !== undefined) return this.meter.text(0, content);
    const chunk = parsedOrNull(data);
    if (chunk !== null) this.noteTexts(chunk);
  }

  /** The generated text of a chunk's choices, by choice (nothing once the upstream's report covers it). */
  private noteTexts(chunk: Record<string, unknown>): void {
    if (!Array.isArray(chunk.choices) || this.meter.isReported) return;
    for (const choice of chunk.choices) {
      if (!isRecord(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      if (isRecord(choice.delta)) this.meter.text(index, textOfMessage(choice.delta));
      else if (typeof choice.text === 'string') this.meter.text(index, choice.text); // a legacy completion
    }
  }
}

/** `text` without `fragment`, when it occurs exactly once; else undefined. */
function withoutOnce(text: string, fragment: string): string | undefined {
  const at = text.indexOf(fragment);
  if (at === -1 || text.indexOf(fragment, at + fragment.length) !== -1) return undefined;
  return text.slice(0, at) + text.slice(at + fragment.length);
}
