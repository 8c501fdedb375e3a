// One request to one deployment, over undici's dispatch API: the answer arrives in
// callbacks, chunk by chunk, with no Readable stream, no async iteration and no promise per
// chunk in between (the request API's body stream cost more than lmgate's own work on a
// fast upstream). Settles exactly once: with the answer, with an AttemptFailure (try
// another deployment), or with an error that ends the call (an upstream 4xx, the client
// gone). Nothing about the upstream (address, key) goes into a message a client may see;
// details go into `cause`, which only the log sees.
import { createHash } from 'node:crypto';
import type { Dispatcher } from 'undici';
import { AttemptFailure, ClientGoneError, UpstreamRejectedError, type UpstreamErrorReport } from '../../errors.js';
import type { BackendCall, ClientLink, CompletionResult, StreamResult } from '../backend.js';
import { midStreamError, transportFailure } from './attempt-failure.js';
import type { AttemptOutcome, Deployment } from './deployment.js';
import { SseDataReader } from './sse-data-reader.js';
import { upstreamErrorOf } from './wire.js';

// Bounds on what lmgate holds in memory for one upstream answer.
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
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
  /** The request as sent, for telling one request's failures from another's. */
  private sentBody = '';
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
    this.sentBody = body;
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

  /** Names the request sent: the same body (a client's retry of it) has the same name. Computed only when asked, after a failure. */
  requestFingerprint(): string {
    return createHash('sha256').update(this.sentBody).digest('base64url');
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
    const clientFault = status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 407 && status !== 408;
    // The log names the deployment by model and position, never by address.
    const name = `${this.deployment.modelId} deployment ${this.deployment.index}`;
    if (clientFault) return new UpstreamRejectedError(this.report(body) ?? { status, message: `the model server answered ${status}`, fields: {} }, name);
    // 502, 503 and 504 say the server (or a proxy before it) is down or overloaded; any
    // other 5xx may be the request's own doing (llama.cpp answers 500 when the model's
    // output fails its tool-call parser), which the circuit breaker weighs apart.
    const kind = status >= 500 && status !== 502 && status !== 503 && status !== 504 ? 'server_error' : 'bad_answer';
    const report = status >= 500 ? this.report(body) : undefined;
    return new AttemptFailure(kind, `upstream answered ${status}`, where, undefined, undefined, report);
  }

  /** The upstream's error body as the client may see it: its secrets and address redacted. */
  private report(body: string): UpstreamErrorReport | undefined {
    const said = upstreamErrorOf(body);
    if (said === undefined) return undefined;
    const fields: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(said.fields)) fields[name] = typeof value === 'string' ? this.deployment.redact(value) : value;
    return { status: this.status, message: this.deployment.redact(said.message), fields };
  }
}

// ---------------------------------------------------------------------------------------

/**
 * An answer read whole, at most MAX_ANSWER_BYTES, then read by `read`, which settles the
 * exchange. Nothing reaches the client before the whole answer has come, so the client's
 * leaving ends the call and a broken connection lets another deployment try.
 */
export abstract class WholeAnswerExchange<C extends UpstreamCall> extends Exchange<CompletionResult, C> {
  private parts: Buffer[] = [];
  private bytes = 0;

  /** Reads the answer's text, and succeeds or fails with it. */
  protected abstract read(text: string): void;

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
    const { parts } = this;
    this.read(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, this.bytes).toString('utf8'));
  }

  protected transportError(err: unknown): void {
    this.fail(this.failureOf(err));
  }

  protected clientGone(): void {
    this.fail(new ClientGoneError());
  }

  /** The answer parsed; undefined, the exchange failed, when it is not JSON. */
  protected parsed(text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      this.fail(new AttemptFailure('bad_answer', 'upstream sent malformed JSON', this.deployment.label, err));
      return undefined;
    }
  }
}

/**
 * A streamed answer: each server-sent event handed to `relayEvent` as it arrives, the
 * upstream paused while the client's socket is full. A failure before anything reached
 * the client lets another deployment try; after it, the stream ends with the error and
 * the client is charged for what it got.
 */
export abstract class EventStreamExchange<C extends UpstreamCall> extends Exchange<StreamResult, C> {
  private readonly reader: SseDataReader;
  private paused = false;

  constructor(
    call: C,
    deployment: Deployment,
    private readonly socket: { drained(): Promise<void> },
  ) {
    super(call, deployment);
    this.reader = new SseDataReader(deployment.label);
  }

  /** Handles one event's data; true when the client's socket asks to wait for a drain. Throws an AttemptFailure for a bad event. */
  protected abstract relayEvent(data: string): boolean;
  /** Everything was delivered: the upstream said its stream is complete. */
  protected abstract get isComplete(): boolean;
  /** Something has reached the client (no other deployment can take over). */
  protected abstract get hasSent(): boolean;
  /** The result of a complete stream (it may still send the client a last event). */
  protected abstract finished(): StreamResult;
  /** The usage of what the client was sent, for a stream cut short. */
  protected abstract partial(): StreamResult;

  /** A stream that ends here, without a transport error, ended properly. */
  protected get mayEndHere(): boolean {
    return this.isComplete;
  }

  /** What an error while streaming means for the attempt. */
  protected streamFailure(err: unknown): AttemptFailure {
    return this.failureOf(err);
  }

  protected answerData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    try {
      for (const data of this.reader.push(chunk)) {
        if (this.relayEvent(data) && !this.paused) {
          this.paused = true;
          controller.pause();
          void this.socket.drained().then(() => {
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
      for (const data of this.reader.end()) this.relayEvent(data);
    } catch (err) {
      return this.transportError(err);
    }
    if (!this.mayEndHere) return this.endWith(new AttemptFailure('bad_answer', 'upstream stream ended early', this.deployment.label));
    this.succeed(this.finished(), 'ok');
  }

  protected transportError(err: unknown): void {
    // Everything was delivered and only the goodbye failed: that is a finished stream.
    if (this.isComplete) return this.succeed(this.finished(), 'ok');
    this.endWith(this.streamFailure(err));
  }

  protected clientGone(): void {
    this.succeed(this.partial(), 'aborted');
  }

  /** Before anything was sent: try another deployment; after it: end the stream with the error. */
  private endWith(failure: AttemptFailure): void {
    if (!this.hasSent) return this.fail(failure);
    this.succeed({ ...this.partial(), error: midStreamError(failure) }, failure.kind);
  }
}
