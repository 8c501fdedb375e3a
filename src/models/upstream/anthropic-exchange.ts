// One request to a deployment that speaks Anthropic's Messages API: the chat request
// translated (src/anthropic/), POST /messages, and the answer translated back, whole or
// event by event as the events arrive. Failures, timeouts, failover and the client's
// disconnect are the Exchange's, as for an OpenAI upstream; an `error` event before
// anything reached the client moves on to another deployment like an error status would.
import type { Dispatcher } from 'undici';
import type { Usage } from '../../billing/usage.js';
import { AttemptFailure, ClientGoneError } from '../../errors.js';
import { chatToAnthropicRequest } from '../../anthropic/request-translation.js';
import { anthropicToChatCompletion, usageOfAnthropic } from '../../anthropic/response-translation.js';
import { AnthropicStreamError, AnthropicToChatStream } from '../../anthropic/stream-translation.js';
import { isAnthropicMessage, parseAnthropicEvent } from '../../anthropic/wire-readers.js';
import type { BackendCall, ChunkSink, CompletionResult, StreamResult } from '../backend.js';
import { unixSecNow } from '../openai-body.js';
import { countTextTokens } from '../tokens.js';
import { midStreamError } from './attempt-failure.js';
import type { Deployment } from './deployment.js';
import { Exchange, MAX_ANSWER_BYTES } from './exchange.js';
import { SseDataReader } from './sse-data-reader.js';

/** The Anthropic request for a call; throws ValidationError (422) for what it cannot say. */
function requestText(call: BackendCall, deployment: Deployment, stream: boolean): string {
  return JSON.stringify(chatToAnthropicRequest(call.request, { model: deployment.config.model, maxTokens: call.maxOutputTokens, stream }));
}

/** A whole message, translated into a `chat.completion`. */
export class AnthropicCompletionExchange extends Exchange<CompletionResult> {
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor(call: BackendCall, deployment: Deployment) {
    super(call, deployment);
    try {
      this.start(requestText(call, deployment, false), false);
    } catch (err) {
      this.fail(err);
    }
  }

  protected answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > MAX_ANSWER_BYTES) {
      this.fail(new AttemptFailure('bad_answer', 'upstream answer too large', this.deployment.label));
      controller.abort(new Error('answer too large'));
      return;
    }
    this.parts.push(chunk);
  }

  protected answerEnd(): void {
    const where = this.deployment.label;
    let answer: unknown;
    try {
      answer = JSON.parse(Buffer.concat(this.parts, this.bytes).toString('utf8'));
    } catch (err) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream sent malformed JSON', where, err));
    }
    if (!isAnthropicMessage(answer)) return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not an Anthropic message', where));
    const completion = anthropicToChatCompletion(answer, this.call.modelId, unixSecNow());
    this.succeed({ body: JSON.stringify(completion), usage: usageOfAnthropic(answer.usage), finishReason: completion.choices[0]!.finish_reason }, 'ok');
  }

  protected transportError(err: unknown): void {
    this.fail(this.failureOf(err));
  }

  protected clientGone(): void {
    this.fail(new ClientGoneError());
  }
}

/** A streamed message: each event translated into chat chunks and sent as it arrives, paced by the client's socket. */
export class AnthropicStreamExchange extends Exchange<StreamResult> {
  private readonly reader: SseDataReader;
  private readonly translator: AnthropicToChatStream;
  /** The opening (role) chunk, held until something follows it: until then another deployment may still answer. */
  private held: string | undefined;
  private sentChunks = 0;
  private paused = false;

  constructor(
    call: BackendCall,
    deployment: Deployment,
    private readonly sink: ChunkSink,
  ) {
    super(call, deployment);
    this.reader = new SseDataReader(deployment.label);
    this.translator = new AnthropicToChatStream(call.modelId, unixSecNow(), call.includeUsage);
    try {
      this.start(requestText(call, deployment, true), true);
    } catch (err) {
      this.fail(err);
    }
  }

  protected answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    try {
      for (const data of this.reader.push(chunk)) {
        if (this.relay(data) && !this.paused) {
          this.paused = true;
          controller.pause();
          void this.sink.drained().then(() => {
            this.paused = false;
            if (!this.settled) controller.resume();
          });
        }
        // The client may have gone while an event was written: nothing more for it.
        if (this.settled) return;
      }
    } catch (err) {
      this.transportError(err);
      controller.abort(new Error('stream failed'));
    }
  }

  protected answerEnd(): void {
    try {
      for (const data of this.reader.end()) this.relay(data);
    } catch (err) {
      return this.transportError(err);
    }
    if (!this.translator.isDone) return this.endWith(new AttemptFailure('bad_answer', 'upstream stream ended early', this.deployment.label));
    this.succeed(this.finished(), 'ok');
  }

  protected transportError(err: unknown): void {
    // Everything was delivered and only the goodbye failed: that is a finished stream.
    if (this.translator.isDone) return this.succeed(this.finished(), 'ok');
    this.endWith(err instanceof AnthropicStreamError ? this.streamFailure(err) : this.failureOf(err));
  }

  protected clientGone(): void {
    this.succeed({ usage: this.usage(), finishReason: null }, 'aborted');
  }

  /** Translates one event and sends its chunks; true when the sink asks to wait for a drain. */
  private relay(data: string): boolean {
    const event = parseAnthropicEvent(data);
    if (event === undefined) throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.deployment.label);
    let isFull = false;
    for (const chunk of this.translator.push(event)) {
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

  private finished(): StreamResult {
    return { usage: this.usage(), finishReason: this.translator.finishReason };
  }

  /**
   * The upstream's counts; where they did not come (a stream cut short: Anthropic tells
   * the output count only at the end), lmgate's count of what the client was sent.
   */
  private usage(): Usage {
    const reported = this.translator.reportedUsage();
    return {
      promptTokens: reported.promptTokens ?? this.call.promptTokens,
      completionTokens: reported.completionTokens ?? countTextTokens(this.translator.deliveredText),
    };
  }

  /** Overloaded or rate-limited: another deployment may take it; anything else is a bad answer. */
  private streamFailure(err: AnthropicStreamError): AttemptFailure {
    const isBusy = err.error.type === 'overloaded_error' || err.error.type === 'rate_limit_error';
    return new AttemptFailure(isBusy ? 'busy' : 'bad_answer', `upstream reported ${err.error.type} mid-stream`, this.deployment.label, err);
  }

  /** Before the first chunk: try another deployment; after it: end the stream with the error. */
  private endWith(failure: AttemptFailure): void {
    if (this.sentChunks === 0) return this.fail(failure);
    this.succeed({ usage: this.usage(), finishReason: null, error: midStreamError(failure) }, failure.kind);
  }
}
