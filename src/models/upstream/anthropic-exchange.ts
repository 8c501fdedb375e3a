// One request to a deployment that speaks Anthropic's Messages API: the chat request
// translated (src/anthropic/), POST /messages, and the answer translated back, whole or
// event by event as the events arrive. Failures, timeouts, failover and the client's
// disconnect are the Exchange's, as for an OpenAI upstream; an `error` event before
// anything reached the client moves on to another deployment like an error status would.
import { AttemptFailure } from '../../errors.js';
import { chatToAnthropicRequest } from '../../anthropic/request-translation.js';
import { anthropicToChatCompletion } from '../../anthropic/response-translation.js';
import { AnthropicStreamError, AnthropicToChatStream } from '../../anthropic/stream-translation.js';
import { isAnthropicMessage, parseAnthropicEvent } from '../../anthropic/wire-readers.js';
import type { BackendCall, ChunkSink, StreamResult } from '../backend.js';
import { unixSecNow, usageBody } from '../openai-body.js';
import { microsToCredits } from '../../money.js';
import type { Deployment } from './deployment.js';
import { EventStreamExchange, WholeAnswerExchange } from './exchange.js';
import { UsageMeter } from './usage-meter.js';
import { usageOfAnthropic } from './usage-readers.js';

/**
 * The Anthropic request for a call: the client's own when it came in Anthropic's terms,
 * else the chat request translated (ValidationError, a 422, for what it cannot say).
 */
function requestText(call: BackendCall, deployment: Deployment, stream: boolean): string {
  if (call.anthropicRequest !== undefined) {
    return JSON.stringify({ ...call.anthropicRequest, model: deployment.config.model, max_tokens: call.maxOutputTokens, stream });
  }
  return JSON.stringify(chatToAnthropicRequest(call.request, { model: deployment.config.model, maxTokens: call.maxOutputTokens, stream }));
}

/** A whole message, translated into a `chat.completion`. */
export class AnthropicCompletionExchange extends WholeAnswerExchange<BackendCall> {
  constructor(call: BackendCall, deployment: Deployment) {
    super(call, deployment);
    try {
      this.start(requestText(call, deployment, false), false);
    } catch (err) {
      this.fail(err);
    }
  }

  protected read(text: string): void {
    const answer = this.parsed(text);
    if (answer === undefined) return;
    if (!isAnthropicMessage(answer)) return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not an Anthropic message', this.deployment.label));
    const completion = anthropicToChatCompletion(answer, this.call.modelId, unixSecNow());
    const usage = usageOfAnthropic(answer.usage);
    completion.usage = usageBody(usage, this.call.chargeMicros(usage));
    this.succeed({ body: JSON.stringify(completion), usage, finishReason: completion.choices[0]!.finish_reason }, 'ok');
  }
}

/** A streamed message: each event translated into chat chunks and sent as it arrives, paced by the client's socket. */
export class AnthropicStreamExchange extends EventStreamExchange<BackendCall> {
  private readonly translator: AnthropicToChatStream;
  /** The upstream's counts as they come; where they do not (a stream cut short: Anthropic tells the output count only at the end), lmgate's count of what the client was sent. */
  private readonly meter: UsageMeter;
  /** The opening (role) chunk, held until something follows it: until then another deployment may still answer. */
  private held: string | undefined;
  private sentChunks = 0;

  constructor(
    call: BackendCall,
    deployment: Deployment,
    private readonly sink: ChunkSink,
  ) {
    super(call, deployment, sink);
    this.meter = new UsageMeter({ promptTokens: call.promptTokens });
    this.translator = new AnthropicToChatStream(call.modelId, unixSecNow(), call.includeUsage, this.meter);
    try {
      this.start(requestText(call, deployment, true), true);
    } catch (err) {
      this.fail(err);
    }
  }

  /** Translates one event and sends its chunks; true when the sink asks to wait for a drain. */
  protected relayEvent(data: string): boolean {
    const event = parseAnthropicEvent(data);
    if (event === undefined) throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.deployment.label);
    let isFull = false;
    for (const chunk of this.translator.push(event)) {
      if (chunk.usage != null) chunk.usage.cost = microsToCredits(this.call.chargeMicros(this.meter.usage()));
      const text = JSON.stringify(chunk);
      if (event.type === 'message_start') {
        this.held = text;
        continue;
      }
      if (this.held !== undefined) {
        this.sink.send(this.held);
        this.held = undefined;
        this.sentChunks++;
      }
      this.sentChunks++;
      if (!this.sink.send(text)) isFull = true;
    }
    return isFull;
  }

  protected get isComplete(): boolean {
    return this.translator.isDone;
  }

  protected get hasSent(): boolean {
    return this.sentChunks > 0;
  }

  protected finished(): StreamResult {
    return { usage: this.meter.usage(), finishReason: this.meter.finishReason };
  }

  protected partial(): StreamResult {
    return { usage: this.meter.usage(), finishReason: null };
  }

  /** Overloaded or rate-limited: another deployment may take it; anything else is a bad answer. */
  protected override streamFailure(err: unknown): AttemptFailure {
    if (!(err instanceof AnthropicStreamError)) return this.failureOf(err);
    const isBusy = err.error.type === 'overloaded_error' || err.error.type === 'rate_limit_error';
    return new AttemptFailure(isBusy ? 'busy' : 'bad_answer', `upstream reported ${err.error.type} mid-stream`, this.deployment.label, err);
  }
}
