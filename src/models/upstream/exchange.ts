// One request to one deployment, over undici's dispatch API: the answer arrives in
// callbacks, chunk by chunk, with no Readable stream, no async iteration and no promise per
// chunk in between (the request API's body stream cost more than lmgate's own work on a
// fast upstream). Settles exactly once: with the answer, with an AttemptFailure (try
// another deployment), or with an error that ends the call (an upstream 4xx, the client
// gone). Nothing about the upstream (address, key) goes into a message a client may see;
// details go into `cause`, which only the log sees.
import type { Dispatcher } from 'undici';
import { AttemptFailure, ClientGoneError, UpstreamRejectedError } from '../../errors.js';
import type { BackendCall, ChunkSink, ClientLink, CompletionResult, StreamResult } from '../backend.js';
import { countTextTokens } from '../tokens.js';
import { transportFailure } from './attempt-failure.js';
import type { AttemptOutcome, Deployment } from './deployment.js';
import { SseDataReader } from './sse-data-reader.js';
import { StreamRelay } from './stream-relay.js';
import { isRecord, ModelRenamer, plainCompletion, textOfMessage, textWithUsageCost, upstreamErrorMessage, upstreamRequestText, usageOf } from './wire.js';
import { usageBody } from '../openai-body.js';
import { formatCredits, microsToCredits } from '../../billing/money.js';

// Bounds on what lmgate holds in memory for one upstream answer.
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** What an exchange needs of its call: whom to stop for. */
export interface UpstreamCall {
  client: ClientLink;
}

export abstract class Exchange<T, C extends UpstreamCall = BackendCall> implements Dispatcher.DispatchHandler {
  readonly result: Promise<T>;
  outcome: AttemptOutcome = 'aborted';
  /** A 429's Retry-After, when the attempt failed with one. */
  retryAfterMs: number | undefined;
  /** Seconds from sending to the response headers; undefined if they never came. */
  firstByteSec: number | undefined;
  protected status = 0;
  protected settled = false;
  private readonly startedAt = performance.now();
  private resolveResult!: (value: T) => void;
  private rejectResult!: (reason: unknown) => void;
  private controller: Dispatcher.DispatchController | undefined;
  private pendingAbort: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopListening: (() => void) | undefined;
  private isTimedOut = false;
  /** A non-2xx answer's body, kept for its message. */
  private errorParts: Buffer[] | null = null;
  private errorBytes = 0;
  private retryAfter: string | undefined;

  constructor(
    protected readonly call: C,
    protected readonly deployment: Deployment,
  ) {
    this.result = new Promise<T>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
  }

  /** Sends the request (to the chat path unless told); called by a subclass once it is fully constructed. */
  protected start(body: string, isStream: boolean, path = this.deployment.path): void {
    const { deployment } = this;
    const { firstByteMs, idleMs, totalMs } = deployment.config.timeouts;
    this.timer = setTimeout(() => {
      if (this.settled) return;
      this.isTimedOut = true;
      const timeout = new DOMException('upstream total time limit', 'TimeoutError');
      this.transportError(timeout);
      this.abort(timeout);
    }, totalMs);
    this.stopListening = this.call.client.onAbort(() => {
      if (this.settled) return;
      this.clientGone();
      this.abort(new ClientGoneError());
    });
    deployment.pool.dispatch(
      {
        path,
        method: 'POST',
        headers: isStream ? deployment.streamHeaders : deployment.jsonHeaders,
        body,
        // A non-streamed answer has no first byte before the whole answer is written, so
        // only the total limit applies to it; firstByteMs is a streaming time-to-first-token.
        headersTimeout: isStream ? firstByteMs : totalMs,
        bodyTimeout: idleMs,
      },
      this,
    );
  }

  // --- undici's handler --------------------------------------------------------------

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== undefined) controller.abort(this.pendingAbort);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.firstByteSec = (performance.now() - this.startedAt) / 1000;
    this.status = statusCode;
    if (statusCode < 200 || statusCode >= 300) {
      this.errorParts = [];
      const retryAfter = headers['retry-after'];
      this.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.errorParts === null) return this.answerData(controller, chunk);
    if (this.errorBytes + chunk.length <= MAX_ERROR_BODY_BYTES) this.errorParts.push(chunk);
    this.errorBytes += chunk.length;
  }

  onResponseEnd(): void {
    if (this.settled) return;
    if (this.errorParts === null) return this.answerEnd();
    const text = this.errorBytes <= MAX_ERROR_BODY_BYTES ? Buffer.concat(this.errorParts).toString('utf8') : '';
    this.fail(this.rejection(text));
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error): void {
    if (!this.settled) this.transportError(err);
  }

  // --- what subclasses decide ----------------------------------------------------------

  protected abstract answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  protected abstract answerEnd(): void;
  /** The connection failed or timed out (`err` says which). */
  protected abstract transportError(err: unknown): void;
  /** The client went away before the answer was complete. */
  protected abstract clientGone(): void;

  // --- settling ----------------------------------------------------------------------

  protected succeed(value: T, outcome: AttemptOutcome): void {
    if (this.settle(outcome)) this.resolveResult(value);
  }

  protected fail(err: unknown): void {
    const outcome = err instanceof AttemptFailure ? err.kind : err instanceof UpstreamRejectedError ? 'rejected' : 'aborted';
    if (err instanceof AttemptFailure) this.retryAfterMs = err.retryAfterMs;
    if (this.settle(outcome)) this.rejectResult(err);
  }

  protected failureOf(err: unknown): AttemptFailure {
    return transportFailure(err, this.deployment.label, this.isTimedOut, this.status !== 0);
  }

  /** Stops the upstream request (it may not have started yet). */
  protected abort(reason: Error): void {
    if (this.controller !== undefined) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  private settle(outcome: AttemptOutcome): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.outcome = outcome;
    clearTimeout(this.timer);
    this.stopListening?.();
    return true;
  }

  /** What a non-2xx answer means. */
  private rejection(body: string): Error {
    const { status } = this;
    const where = this.deployment.label;
    // 529 is Anthropic's overloaded_error: busy, like a 429.
    if (status === 429 || status === 529) {
      const seconds = Number(this.retryAfter);
      const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : undefined;
      return new AttemptFailure('busy', 'upstream rate-limited the request', `${where} (retry-after ${String(this.retryAfter)})`, undefined, retryAfterMs);
    }
    // 401/403/407 mean lmgate's own credentials for the upstream are wrong (an operator's
    // problem, and the upstream's message may quote the key), 408 that it gave up waiting:
    // none is the client's fault, so another deployment may do better.
    if (status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 407 && status !== 408) {
      const message = upstreamErrorMessage(body);
      return new UpstreamRejectedError(status, this.deployment.redact(message ?? `the model server answered ${status}`));
    }
    return new AttemptFailure('bad_answer', `upstream answered ${status}`, where);
  }
}

// ---------------------------------------------------------------------------------------

/** A non-streamed completion: read whole, then relayed with lmgate's model id. */
export class CompletionExchange extends Exchange<CompletionResult> {
  private parts: Buffer[] = [];
  private bytes = 0;

  constructor(call: BackendCall, deployment: Deployment) {
    super(call, deployment);
    this.start(completionRequestText(call, deployment.config.model), false);
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
    const text = this.parts.length === 1 ? this.parts[0]!.toString('utf8') : Buffer.concat(this.parts, this.bytes).toString('utf8');
    // The common answer goes out unparsed, its model renamed and its cost added in place;
    // the rest is parsed.
    const renamer = new ModelRenamer(this.call.modelId, this.deployment.config.model);
    const plain = plainCompletion(text);
    const renamed = plain && renamer.renameText(text);
    const costed = plain && renamed && textWithUsageCost(renamed, formatCredits(this.call.chargeMicros(plain.usage)));
    if (plain !== undefined && costed) return this.succeed({ body: costed, ...plain }, 'ok');
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch (err) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream sent malformed JSON', where, err));
    }
    if (!isRecord(answer) || !Array.isArray(answer.choices)) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not a chat completion', where));
    }
    const first: unknown = answer.choices[0];
    const finishReason = isRecord(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null;
    let usage = usageOf(answer.usage);
    if (usage === null) {
      // Some Ollama and llama.cpp versions report none: count what they wrote, and tell
      // the client, who expects OpenAI's `usage` on every completion.
      let completionTokens = 0;
      for (const choice of answer.choices) {
        if (isRecord(choice) && isRecord(choice.message)) completionTokens += countTextTokens(textOfMessage(choice.message));
      }
      usage = { promptTokens: this.call.promptTokens, completionTokens };
      answer.usage = usageBody(usage, this.call.chargeMicros(usage));
    } else if (isRecord(answer.usage)) {
      answer.usage.cost = microsToCredits(this.call.chargeMicros(usage));
    }
    this.succeed({ body: renamer.rename(JSON.stringify(answer), answer), usage, finishReason }, 'ok');
  }

  protected transportError(err: unknown): void {
    this.fail(this.failureOf(err));
  }

  protected clientGone(): void {
    this.fail(new ClientGoneError());
  }
}

/** The non-streamed request for an upstream: the client's text renamed in place when it can be, else serialized. */
function completionRequestText(call: BackendCall, upstreamModel: string): string {
  // complete() answers non-streamed requests; never let a stray flag make the upstream stream.
  if (call.requestText !== undefined && !call.request.stream) {
    const text = upstreamRequestText(call.requestText, call.modelId, upstreamModel, false);
    if (text !== undefined) return text;
  }
  const request = { ...call.request, model: upstreamModel };
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
  return JSON.stringify({ ...call.request, model: upstreamModel, stream: true, stream_options: { ...options, include_usage: true } });
}

// ---------------------------------------------------------------------------------------

/** A streamed completion: events relayed as they arrive, paced by the client's socket. */
export class StreamExchange extends Exchange<StreamResult> {
  private readonly sink: ChunkSink;
  private readonly relay: StreamRelay;
  private readonly reader: SseDataReader;
  private paused = false;

  constructor(call: BackendCall, deployment: Deployment, sink: ChunkSink) {
    super(call, deployment);
    this.sink = sink;
    this.relay = new StreamRelay(call, sink, deployment.label, deployment.config.model);
    this.reader = new SseDataReader(deployment.label);
    this.start(streamRequestText(call, deployment.config.model), true);
  }

  protected answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    try {
      for (const data of this.reader.push(chunk)) {
        if (this.relay.relay(data) && !this.paused) {
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
      controller.abort(new Error('malformed stream'));
    }
  }

  protected answerEnd(): void {
    try {
      for (const data of this.reader.end()) this.relay.relay(data);
    } catch (err) {
      return this.transportError(err);
    }
    if (!this.relay.isDone && !this.relay.hasFinished) {
      return this.endWith(new AttemptFailure('bad_answer', 'upstream stream ended early', this.deployment.label));
    }
    this.succeed(this.relay.finish(), 'ok');
  }

  protected transportError(err: unknown): void {
    // Everything was delivered and only the goodbye failed: that is a finished stream.
    if (this.relay.isDone) return this.succeed(this.relay.finish(), 'ok');
    this.endWith(this.failureOf(err));
  }

  protected clientGone(): void {
    this.succeed(this.relay.partial(), 'aborted');
  }

  /** Before the first chunk: try another deployment; after it: end the stream with the error. */
  private endWith(failure: AttemptFailure): void {
    if (this.relay.sentChunks === 0) return this.fail(failure);
    this.succeed(this.relay.failed(failure), failure.kind);
  }
}
