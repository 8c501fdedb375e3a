// One chat request to a deployment speaking OpenAI's API, on its /chat/completions: the
// client's request with only `model` changed (and usage asked for when streaming), the
// answer relayed with lmgate's model id and cost, whole or event by event.
import type { BackendCall, ChunkSink, StreamResult } from '../backend.js';
import { AttemptFailure } from '../../errors.js';
import { formatCredits, microsToCredits } from '../../billing/money.js';
import { usageBody } from '../openai-body.js';
import { countTextTokens } from '../tokens.js';
import { requestedMaxTokens } from '../../chat/chat-request.js';
import type { Deployment } from './deployment.js';
import { EventStreamExchange, WholeAnswerExchange } from './exchange.js';
import { StreamRelay } from './stream-relay.js';
import { isRecord, ModelRenamer, plainCompletion, textOfMessage, textWithUsageCost, upstreamRequestText, usageOf } from './wire.js';

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
    const first: unknown = answer.choices[0];
    const finishReason = isRecord(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null;
    let usage = usageOf(answer.usage);
    const counted = countedOutputTokens(answer.choices, requestedMaxTokens(this.call.request));
    if (usage === null) {
      // Some Ollama and llama.cpp versions report none: count what they wrote, and tell
      // the client, who expects OpenAI's `usage` on every completion.
      usage = { promptTokens: this.call.promptTokens, completionTokens: counted, basis: 'counted' };
      answer.usage = usageBody(usage, this.call.chargeMicros(usage));
    } else if (answer.choices.length > 1 && usage.completionTokens < counted) {
      // llama.cpp's server reports one choice's output for several: every choice is billed,
      // and the usage shown says so beside its cost.
      usage = { ...usage, completionTokens: counted, basis: 'counted' };
      answer.usage = usageBody(usage, this.call.chargeMicros(usage));
    } else if (isRecord(answer.usage)) {
      answer.usage.cost = microsToCredits(this.call.chargeMicros(usage));
    }
    this.succeed({ body: renamer.rename(JSON.stringify(answer), answer), usage, finishReason }, 'ok');
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

/**
 * lmgate's count of the choices' output: a choice cut at the client's max_tokens wrote
 * exactly that many of the model's tokens; any other is counted with lmgate's tokenizer.
 */
function countedOutputTokens(choices: unknown[], maxTokens: number | undefined): number {
  let tokens = 0;
  for (const choice of choices) {
    if (!isRecord(choice)) continue;
    if (choice.finish_reason === 'length' && maxTokens !== undefined) tokens += maxTokens;
    else if (isRecord(choice.message)) tokens += countTextTokens(textOfMessage(choice.message));
    else if (typeof choice.text === 'string') tokens += countTextTokens(choice.text); // a legacy completion
  }
  return tokens;
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
