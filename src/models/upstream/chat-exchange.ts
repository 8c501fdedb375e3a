// One chat request to a deployment speaking OpenAI's API, on its /chat/completions: the
// client's request with only `model` changed (and usage asked for when streaming), the
// answer relayed with lmgate's model id and cost, whole or event by event.
import type { BackendCall, ChunkSink, StreamResult } from '../backend.js';
import { AttemptFailure } from '../../errors.js';
import { formatCredits, microsToCredits } from '../../money.js';
import { usageBody } from '../openai-body.js';
import { requestedMaxTokens } from '../../chat/chat-request.js';
import type { Deployment } from './deployment.js';
import { EventStreamExchange, WholeAnswerExchange } from './exchange.js';
import { StreamRelay } from './stream-relay.js';
import { UsageMeter } from './usage-meter.js';
import { usageOfChat } from './usage-readers.js';
import { isRecord, ModelRenamer, plainCompletion, textOfMessage, textWithUsageCost, upstreamRequestText } from './wire.js';

/** A non-streamed completion: read whole, then relayed with lmgate's model id. */
export class CompletionExchange extends WholeAnswerExchange<BackendCall> {
  /** `path`: the chat path, or the legacy completions path for a request passed through. */
  constructor(call: BackendCall, deployment: Deployment, path = deployment.path) {
    super(call, deployment);
    this.start(completionRequestText(call, deployment.config.model), false, path);
  }

  protected read(text: string): void {
    // The common answer goes out unparsed, its model renamed and its cost added in place;
    // the rest is parsed.
    const renamer = new ModelRenamer(this.call.modelId, this.deployment.config.model);
    // Several choices are parsed: their usage may be one choice's (below).
    const plain = (this.call.request.n ?? 1) > 1 ? undefined : plainCompletion(text);
    const renamed = plain && renamer.renameText(text);
    const costed = plain && renamed && textWithUsageCost(renamed, formatCredits(this.call.chargeMicros(plain.usage)));
    if (plain !== undefined && costed) return this.succeed({ body: costed, ...plain }, 'ok');
    const answer = this.parsed(text);
    if (answer === undefined) return;
    if (!isRecord(answer) || !Array.isArray(answer.choices)) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not a chat completion', this.deployment.label));
    }
    const meter = new UsageMeter({ promptTokens: this.call.promptTokens, maxTokens: requestedMaxTokens(this.call.request) });
    answer.choices.forEach((choice: unknown, position) => {
      if (!isRecord(choice)) return;
      const index = typeof choice.index === 'number' ? choice.index : position;
      if (isRecord(choice.message)) meter.text(index, textOfMessage(choice.message));
      else if (typeof choice.text === 'string') meter.text(index, choice.text); // a legacy completion
      if (typeof choice.finish_reason === 'string') meter.finish(index, choice.finish_reason);
    });
    const reported = usageOfChat(answer.usage);
    if (reported !== null) meter.report(reported);
    const usage = meter.usage();
    if (usage === reported && isRecord(answer.usage)) {
      answer.usage.cost = microsToCredits(this.call.chargeMicros(usage));
    } else {
      // No report (some Ollama and llama.cpp versions), or llama.cpp's one choice's output
      // for several: lmgate's count, shown to the client, who expects OpenAI's `usage` on
      // every completion, beside its cost.
      answer.usage = usageBody(usage, this.call.chargeMicros(usage));
    }
    this.succeed({ body: renamer.rename(JSON.stringify(answer), answer), usage, finishReason: meter.finishReason }, 'ok');
  }
}

/** A streamed completion: events relayed as they arrive, paced by the client's socket. */
export class StreamExchange extends EventStreamExchange<BackendCall> {
  private readonly relay: StreamRelay;

  constructor(call: BackendCall, deployment: Deployment, sink: ChunkSink, path = deployment.path) {
    super(call, deployment, sink);
    this.relay = new StreamRelay(call, sink, deployment.label, deployment.config.model);
    this.start(streamRequestText(call, deployment.config.model), true, path);
  }

  protected relayEvent(data: string): boolean {
    return this.relay.relay(data);
  }

  /** The upstream said `[DONE]`. */
  protected get isComplete(): boolean {
    return this.relay.isDone;
  }

  /** Some servers end without `[DONE]` once every choice has its finish reason. */
  protected override get mayEndHere(): boolean {
    return this.relay.isDone || this.relay.hasFinished;
  }

  protected get hasSent(): boolean {
    return this.relay.sentChunks > 0;
  }

  protected finished(): StreamResult {
    return this.relay.finish();
  }

  protected partial(): StreamResult {
    return this.relay.partial();
  }
}

/** The non-streamed request for an upstream: the client's text renamed in place when it can be, else serialized. */
function completionRequestText(call: BackendCall, upstreamModel: string): string {
  // complete() answers non-streamed requests; never let a stray flag make the upstream stream.
  if (call.requestText !== undefined && !call.request.stream) {
    const text = upstreamRequestText(call.requestText, call.modelId, upstreamModel, false);
    if (text !== undefined) return text;
  }
  const request: Record<string, unknown> = { ...(call.upstreamBody ?? call.request), model: upstreamModel };
  if (request.stream) request.stream = false;
  return JSON.stringify(request);
}

/**
 * The streamed request for an upstream: lmgate always asks for usage, to charge exactly
 * (the relay hides it from a client that did not ask). The client's text when it can be
 * changed in place, else serialized.
 */
function streamRequestText(call: BackendCall, upstreamModel: string): string {
  const options = call.request.stream_options;
  if (call.requestText !== undefined && (options === undefined || options?.include_usage === true)) {
    const text = upstreamRequestText(call.requestText, call.modelId, upstreamModel, options === undefined);
    if (text !== undefined) return text;
  }
  return JSON.stringify({ ...(call.upstreamBody ?? call.request), model: upstreamModel, stream: true, stream_options: { ...options, include_usage: true } });
}
