// Models served by OpenAI-compatible upstreams (vLLM, Ollama, llama.cpp's server, LM
// Studio, OpenAI itself, any /v1 server). A model has one or more deployments; each call
// picks one (weighted, preferring the least busy), forwards the client's request with only
// `model` rewritten, and relays the answer in OpenAI's shape with lmgate's model id.
//
// Failures before the client has seen anything (refused, reset, 5xx, 429, timeouts,
// garbage) move on to another deployment; after the first chunk has gone out the stream
// ends with an error and the client is charged for what it got. Nothing about an upstream
// (address, key) goes into an error's message: that may reach the client. The details go
// into `cause`, which only the log sees.
import { Pool, type Dispatcher } from 'undici';
import {
  BadUpstreamError,
  NoBackendAvailableError,
  UpstreamRejectedError,
  UpstreamTimeoutError,
  type LmgateError,
} from '../errors.js';
import type { BackendCall, ChatBackend, ChunkSink, CompletionResult, StreamResult, Usage } from './backend.js';
import { sleepMs } from './abortable-sleep.js';
import { countTextTokens } from './tokens.js';

export interface UpstreamTimeouts {
  /** TCP (and TLS) connection set-up. */
  connectMs: number;
  /** Streaming: from sending the request to the response headers. */
  firstByteMs: number;
  /** Longest silence between two pieces of the response body. */
  idleMs: number;
  /** The whole call to one deployment, answer included. */
  totalMs: number;
}

export interface UpstreamDeployment {
  /** Base URL ending in /v1, e.g. http://10.0.0.5:8000/v1. */
  url: string;
  /** The upstream's name for the model. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set. Never logged, never in a message. */
  apiKey?: string;
  /** Share of the traffic relative to the model's other deployments; 0 takes none. */
  weight: number;
  /** Requests in flight at most; a full deployment is skipped. */
  maxConcurrent: number;
  timeouts: UpstreamTimeouts;
}

export interface OpenAICompatibleBackendOptions {
  deployments: UpstreamDeployment[];
  /** Uniform in [0, 1): the weighted pick and the retry jitter. Tests pin it. */
  random?: () => number;
}

export interface OpenAICompatibleBackend extends ChatBackend {
  /** Always a promise: the answer comes over the network. */
  complete(call: BackendCall): Promise<CompletionResult>;
  /** Closes the keep-alive pools once their requests have finished (shutdown). */
  close(): Promise<void>;
}

// Between two attempts: long enough not to hammer a struggling fleet in lockstep, short
// enough that a failover stays well under a second.
const RETRY_BACKOFF_MIN_MS = 50;
const RETRY_BACKOFF_JITTER_MS = 100;
// Bounds on what lmgate holds in memory for one upstream answer.
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const MAX_EVENT_CHARS = 16 * 1024 * 1024;
const MAX_UPSTREAM_MESSAGE_CHARS = 1000;
const REDACTED = '[redacted]';

export function createOpenAICompatibleBackend(options: OpenAICompatibleBackendOptions): OpenAICompatibleBackend {
  const random = options.random ?? Math.random;
  const pools = new Map<string, Pool>();
  const deployments = options.deployments.map((config) => {
    const url = new URL(config.url);
    // One keep-alive pool per origin (and connect timeout, a pool-wide setting), shared
    // by the deployments that live there; the other timeouts are set per request.
    const poolKey = `${url.origin} ${config.timeouts.connectMs}`;
    let pool = pools.get(poolKey);
    if (pool === undefined) {
      pool = new Pool(url.origin, { connect: { timeout: config.timeouts.connectMs } });
      pools.set(poolKey, pool);
    }
    return new Deployment(config, url, pool);
  });

  /** Weighted random among the untried deployments with room, weight / (1 + in flight). */
  function pick(tried: ReadonlySet<Deployment>): Deployment | undefined {
    let total = 0;
    for (const deployment of deployments) if (!tried.has(deployment)) total += deployment.score();
    if (total <= 0) return undefined;
    let point = random() * total;
    let chosen: Deployment | undefined;
    for (const deployment of deployments) {
      if (tried.has(deployment)) continue;
      const score = deployment.score();
      if (score <= 0) continue;
      chosen = deployment;
      point -= score;
      if (point < 0) break;
    }
    return chosen;
  }

  /**
   * Runs `attempt` on one deployment after another until one succeeds, at most once per
   * deployment. Only an AttemptFailure moves on; anything else (an upstream 4xx) ends
   * the call as it is. `aborted` gives the outcome once the client has gone.
   */
  async function withFailover<T>(
    call: BackendCall,
    attempt: (deployment: Deployment, signal: AttemptSignal) => Promise<T>,
    aborted: () => T,
  ): Promise<T> {
    const tried = new Set<Deployment>();
    const failures: AttemptFailure[] = [];
    for (let attemptNo = 0; attemptNo < deployments.length; attemptNo++) {
      if (attemptNo > 0) await sleepMs(RETRY_BACKOFF_MIN_MS + random() * RETRY_BACKOFF_JITTER_MS, call.signal);
      if (call.signal.aborted) return aborted();
      // A 429's Retry-After needs no more than this: a tried deployment is not picked
      // again for the same request.
      const deployment = pick(tried);
      if (deployment === undefined) break;
      tried.add(deployment);
      deployment.inFlight++;
      const signal = new AttemptSignal(call.signal, deployment.config.timeouts.totalMs);
      try {
        return await attempt(deployment, signal);
      } catch (err) {
        if (!(err instanceof AttemptFailure)) throw err;
        failures.push(err);
      } finally {
        signal.dispose();
        deployment.inFlight--;
      }
    }
    if (call.signal.aborted) return aborted();
    throw finalError(failures);
  }

  function complete(call: BackendCall): Promise<CompletionResult> {
    return withFailover(
      call,
      (deployment, signal) => completeOnce(call, deployment, signal),
      () => {
        throw call.signal.reason;
      },
    );
  }

  function stream(call: BackendCall, sink: ChunkSink): Promise<StreamResult> {
    return withFailover(
      call,
      (deployment, signal) => streamOnce(call, sink, deployment, signal),
      // Gone before anything came back: nothing was generated for it.
      (): StreamResult => ({ usage: { promptTokens: call.promptTokens, completionTokens: 0 }, finishReason: null }),
    );
  }

  async function close(): Promise<void> {
    await Promise.all([...pools.values()].map((pool) => pool.close()));
  }

  return { complete, stream, close };
}

// ---------------------------------------------------------------------------------------
// One deployment and one attempt on it.

class Deployment {
  inFlight = 0;
  readonly path: string;
  readonly jsonHeaders: Record<string, string>;
  readonly streamHeaders: Record<string, string>;
  /** Where, for the log (never the key). */
  readonly label: string;
  /** Texts that must not appear in anything relayed from this upstream. */
  private readonly secrets: string[];

  constructor(
    readonly config: UpstreamDeployment,
    url: URL,
    readonly pool: Pool,
  ) {
    this.path = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
    const auth: Record<string, string> = config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {};
    this.jsonHeaders = { 'content-type': 'application/json', accept: 'application/json', ...auth };
    this.streamHeaders = { 'content-type': 'application/json', accept: 'text/event-stream', ...auth };
    this.label = `${url.origin}${this.path} (${config.model})`;
    this.secrets = [config.apiKey, url.origin, url.host, url.hostname].filter(
      (secret): secret is string => typeof secret === 'string' && secret.length > 0,
    );
  }

  score(): number {
    if (this.config.weight <= 0 || this.inFlight >= this.config.maxConcurrent) return 0;
    return this.config.weight / (1 + this.inFlight);
  }

  /** An upstream's own words with its address and our key blanked out. */
  redact(text: string): string {
    let clean = text.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${text.slice(0, MAX_UPSTREAM_MESSAGE_CHARS)}…` : text;
    for (const secret of this.secrets) clean = clean.split(secret).join(REDACTED);
    return clean;
  }

  send(body: string, isStream: boolean, signal: AttemptSignal): Promise<Dispatcher.ResponseData> {
    const { firstByteMs, idleMs, totalMs } = this.config.timeouts;
    return this.pool.request({
      path: this.path,
      method: 'POST',
      headers: isStream ? this.streamHeaders : this.jsonHeaders,
      body,
      signal: signal.signal,
      // A non-streamed answer has no first byte before the whole answer is written, so
      // only the total limit applies to it; firstByteMs is a streaming time-to-first-token.
      headersTimeout: isStream ? firstByteMs : totalMs,
      bodyTimeout: idleMs,
    });
  }
}

/**
 * The client's signal joined with the deployment's total time limit: what
 * AbortSignal.any([call.signal, AbortSignal.timeout(totalMs)]) gives, but with the timer
 * cleared when the attempt ends (AbortSignal.timeout's would live for totalMs, minutes,
 * after every request).
 */
class AttemptSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onClientAbort: () => void;
  isTimedOut = false;

  constructor(
    private readonly clientSignal: AbortSignal,
    totalMs: number,
  ) {
    this.onClientAbort = () => this.controller.abort(clientSignal.reason);
    if (clientSignal.aborted) this.onClientAbort();
    else clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    this.timer = setTimeout(() => {
      this.isTimedOut = true;
      this.controller.abort(new DOMException('upstream total time limit', 'TimeoutError'));
    }, totalMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}

type FailureKind = 'unreachable' | 'busy' | 'bad_answer' | 'timeout';

/** One deployment failed before the client saw anything: try another. */
class AttemptFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    /** Safe for a client: says what, never where. */
    readonly detail: string,
    where: string,
    cause?: unknown,
  ) {
    super(`${where}: ${detail}`, { cause });
    this.name = 'AttemptFailure';
  }

  toLmgateError(): LmgateError {
    return this.kind === 'timeout'
      ? new UpstreamTimeoutError(this.detail, { cause: this })
      : new BadUpstreamError(this.detail, { cause: this });
  }
}

/**
 * All deployments failed: a bad answer anywhere is 502, else a timeout 504, else nobody
 * could take the request (refused, reset, rate-limited, at capacity) 503.
 */
function finalError(failures: readonly AttemptFailure[]): LmgateError {
  const last = failures.at(-1);
  if (last === undefined) return new NoBackendAvailableError('every deployment is at its concurrency limit');
  const cause = failures.length === 1 ? last : new AggregateError(failures, 'every deployment failed');
  const summary = `${failures.length === 1 ? 'the deployment' : `all ${failures.length} deployments`} failed; last: ${last.detail}`;
  if (failures.some((failure) => failure.kind === 'bad_answer')) return new BadUpstreamError(summary, { cause });
  if (failures.some((failure) => failure.kind === 'timeout')) return new UpstreamTimeoutError(summary, { cause });
  return new NoBackendAvailableError(summary, { cause });
}

const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN']);
const BROKEN_CONNECTION_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

/** What a transport error means. `isAnswering`: the response had begun. */
function failureOf(err: unknown, deployment: Deployment, signal: AttemptSignal, isAnswering: boolean): AttemptFailure {
  const where = deployment.label;
  if (err instanceof AttemptFailure) return err;
  if (signal.isTimedOut) return new AttemptFailure('timeout', 'upstream exceeded its total time limit', where, err);
  const code = errorCode(err);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new AttemptFailure('timeout', 'upstream connect timed out', where, err);
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new AttemptFailure('timeout', 'upstream sent no answer in time', where, err);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new AttemptFailure('timeout', 'upstream went idle', where, err);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return new AttemptFailure('unreachable', 'upstream unreachable', where, err);
  if (code !== undefined && BROKEN_CONNECTION_CODES.has(code)) {
    return isAnswering
      ? new AttemptFailure('bad_answer', 'upstream connection broke mid-answer', where, err)
      : new AttemptFailure('unreachable', 'upstream closed the connection', where, err);
  }
  return new AttemptFailure('bad_answer', 'upstream request failed', where, err);
}

function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  // Happy eyeballs (several addresses) reports an AggregateError of the attempts.
  if (err instanceof AggregateError) return errorCode(err.errors[0]);
  return undefined;
}

/** Sends and waits for the status line: non-2xx become a failure or a rejection. */
async function sendAndCheck(
  deployment: Deployment,
  body: string,
  isStream: boolean,
  signal: AttemptSignal,
): Promise<Dispatcher.ResponseData> {
  let response: Dispatcher.ResponseData;
  try {
    response = await deployment.send(body, isStream, signal);
  } catch (err) {
    throw failureOf(err, deployment, signal, false);
  }
  const status = response.statusCode;
  if (status >= 200 && status < 300) return response;
  const where = deployment.label;
  if (status === 429) {
    const retryAfter = response.headers['retry-after'];
    await discard(response.body);
    throw new AttemptFailure('busy', 'upstream rate-limited the request', `${where} (retry-after ${String(retryAfter)})`);
  }
  // 401/403/407 mean lmgate's own credentials for the upstream are wrong (an operator's
  // problem, and the upstream's message may quote the key), 408 that it gave up waiting:
  // none is the client's fault, so another deployment may do better.
  if (status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 407 && status !== 408) {
    const message = await readUpstreamMessage(response.body);
    throw new UpstreamRejectedError(status, deployment.redact(message ?? `the model server answered ${status}`));
  }
  await discard(response.body);
  throw new AttemptFailure('bad_answer', `upstream answered ${status}`, where);
}

async function discard(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: MAX_ERROR_BODY_BYTES });
  } catch {
    // The body is of no interest; a failure to drain it only costs the connection.
  }
}

/** OpenAI's `error.message` from an error body, if it has one. */
async function readUpstreamMessage(body: Dispatcher.ResponseData['body']): Promise<string | undefined> {
  let text: string | undefined;
  try {
    text = await readText(body, MAX_ERROR_BODY_BYTES);
  } catch {
    return undefined;
  }
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (isRecord(parsed)) {
      const error = parsed.error;
      if (isRecord(error) && typeof error.message === 'string' && error.message.length > 0) return error.message;
      // Some servers (older llama.cpp, FastAPI) answer {"error": "..."} or {"detail": "..."}.
      if (typeof error === 'string' && error.length > 0) return error;
      if (typeof parsed.detail === 'string' && parsed.detail.length > 0) return parsed.detail;
      if (typeof parsed.message === 'string' && parsed.message.length > 0) return parsed.message;
    }
  } catch {
    // Not JSON: fall back to the generic message.
  }
  return undefined;
}

/** The body as text, or undefined when it is longer than the limit. */
async function readText(body: Dispatcher.ResponseData['body'], limitBytes: number): Promise<string | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of body as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limitBytes) return undefined; // leaving the loop destroys the body
    parts.push(part);
  }
  return Buffer.concat(parts, size).toString('utf8');
}

// ---------------------------------------------------------------------------------------
// Non-streaming.

async function completeOnce(call: BackendCall, deployment: Deployment, signal: AttemptSignal): Promise<CompletionResult> {
  const request = { ...call.request, model: deployment.config.model };
  // complete() answers non-streamed requests; never let a stray flag make the upstream stream.
  if (request.stream) request.stream = false;
  const response = await sendAndCheck(deployment, JSON.stringify(request), false, signal);
  const where = deployment.label;
  let text: string | undefined;
  try {
    text = await readText(response.body, MAX_ANSWER_BYTES);
  } catch (err) {
    throw failureOf(err, deployment, signal, true);
  }
  if (text === undefined) throw new AttemptFailure('bad_answer', 'upstream answer too large', where);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch (err) {
    throw new AttemptFailure('bad_answer', 'upstream sent malformed JSON', where, err);
  }
  if (!isRecord(answer) || !Array.isArray(answer.choices)) {
    throw new AttemptFailure('bad_answer', 'upstream answer is not a chat completion', where);
  }
  answer.model = call.modelId;
  let usage = usageOf(answer.usage);
  if (usage === null) {
    // Some Ollama and llama.cpp versions report none: count what they wrote, and tell
    // the client, who expects OpenAI's `usage` on every completion.
    let completionTokens = 0;
    for (const choice of answer.choices) {
      if (isRecord(choice) && isRecord(choice.message)) completionTokens += countTextTokens(textOfMessage(choice.message));
    }
    usage = { promptTokens: call.promptTokens, completionTokens };
    answer.usage = usageBody(usage);
  }
  const first: unknown = answer.choices[0];
  const finishReason = isRecord(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null;
  return { body: JSON.stringify(answer), usage, finishReason };
}

// ---------------------------------------------------------------------------------------
// Streaming.

async function streamOnce(
  call: BackendCall,
  sink: ChunkSink,
  deployment: Deployment,
  signal: AttemptSignal,
): Promise<StreamResult> {
  // lmgate always asks for usage, to charge exactly; the relay hides it from a client
  // that did not ask.
  const request = {
    ...call.request,
    model: deployment.config.model,
    stream: true,
    stream_options: { ...call.request.stream_options, include_usage: true },
  };
  const response = await sendAndCheck(deployment, JSON.stringify(request), true, signal);
  const relay = new StreamRelay(call, sink, deployment.label);
  const reader = new SseDataReader(deployment.label);
  try {
    for await (const bytes of response.body as AsyncIterable<Buffer>) {
      for (const data of reader.push(bytes)) {
        if (relay.relay(data)) await sink.drained();
        if (call.signal.aborted) return relay.partial();
      }
    }
    for (const data of reader.end()) {
      if (relay.relay(data)) await sink.drained();
      if (call.signal.aborted) return relay.partial();
    }
  } catch (err) {
    if (call.signal.aborted) return relay.partial();
    // Everything was delivered and only the goodbye failed: that is a finished stream.
    if (!relay.isDone) return relay.failed(failureOf(err, deployment, signal, true));
  }
  if (!relay.isDone && !relay.hasFinished) {
    return relay.failed(new AttemptFailure('bad_answer', 'upstream stream ended early', deployment.label));
  }
  return relay.finish();
}

/**
 * Relays one upstream stream's events to the client: lmgate's model id on every chunk,
 * usage kept for the bill and shown only to a client that asked for it.
 */
class StreamRelay {
  /** Sent and seen text per choice index, counted when the upstream reports no usage. */
  private readonly texts = new Map<number, string>();
  private upstreamUsage: Usage | null = null;
  private finishReason: string | null = null;
  private sentChunks = 0;
  private lastChunk: Record<string, unknown> | null = null;
  /** The upstream said `[DONE]`. */
  isDone = false;
  /** Some choice reported its finish_reason. */
  hasFinished = false;

  constructor(
    private readonly call: BackendCall,
    private readonly sink: ChunkSink,
    private readonly where: string,
  ) {}

  /** Handles one event's data; true when the sink asks to wait for a drain. */
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
    if (!this.call.includeUsage) {
      // The usage-only chunk lmgate asked for on its own account.
      if (choices.length === 0 && usage !== null) return false;
      delete chunk.usage;
    }
    for (const choice of choices) this.note(choice);
    chunk.model = this.call.modelId;
    this.lastChunk = chunk;
    this.sentChunks++;
    return !this.sink.send(JSON.stringify(chunk));
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

/**
 * Splits a server-sent-events byte stream into the data of each event, as it arrives:
 * lines may end in LF or CRLF, an event ends at a blank line, comments (`: ping`) and
 * other fields are skipped, and a line cut between two reads waits for its end.
 */
class SseDataReader {
  private readonly decoder = new TextDecoder();
  /** The unfinished last line, in pieces (joined once its end arrives: no quadratic copy). */
  private tail: string[] = [];
  private tailChars = 0;
  /** The data lines of the event being read, or null before its first. */
  private data: string | null = null;

  constructor(private readonly where: string) {}

  push(bytes: Uint8Array): string[] {
    return this.take(this.decoder.decode(bytes, { stream: true }), false);
  }

  end(): string[] {
    return this.take(this.decoder.decode(), true);
  }

  private take(text: string, isEnd: boolean): string[] {
    const events: string[] = [];
    if (text.indexOf('\n') === -1 && !isEnd) {
      if (text.length > 0) {
        this.tail.push(text);
        this.tailChars += text.length;
        if (this.tailChars > MAX_EVENT_CHARS) throw new AttemptFailure('bad_answer', 'upstream event too large', this.where);
      }
      return events;
    }
    const buffer = this.tail.length > 0 ? this.tail.join('') + text : text;
    this.tail = [];
    this.tailChars = 0;
    let start = 0;
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n', start)) {
      this.line(buffer, start, newline, events);
      start = newline + 1;
    }
    if (isEnd) {
      if (start < buffer.length) this.line(buffer, start, buffer.length, events);
      this.dispatch(events); // a stream may end without the last blank line
    } else if (start < buffer.length) {
      this.tail.push(buffer.slice(start));
      this.tailChars = buffer.length - start;
    }
    return events;
  }

  /** A blank line: the event read so far is complete. */
  private dispatch(events: string[]): void {
    if (this.data !== null) events.push(this.data);
    this.data = null;
  }

  private line(buffer: string, start: number, end: number, events: string[]): void {
    if (end > start && buffer.charCodeAt(end - 1) === 13 /* \r */) end--;
    if (end === start) return this.dispatch(events);
    if (buffer.charCodeAt(start) === 58 /* : */) return; // a comment, e.g. a keep-alive
    if (!buffer.startsWith('data:', start)) return; // event:, id:, retry: carry nothing here
    let valueAt = start + 5;
    if (buffer.charCodeAt(valueAt) === 32 /* space */) valueAt++;
    const value = buffer.slice(valueAt, end);
    this.data = this.data === null ? value : `${this.data}\n${value}`;
    if (this.data.length > MAX_EVENT_CHARS) throw new AttemptFailure('bad_answer', 'upstream event too large', this.where);
  }
}

// ---------------------------------------------------------------------------------------
// The wire format.

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An upstream `usage` object, when it has the two counts lmgate bills. */
function usageOf(value: unknown): Usage | null {
  if (!isRecord(value)) return null;
  const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = value;
  if (!isCount(promptTokens) || !isCount(completionTokens)) return null;
  return { promptTokens, completionTokens };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function usageBody(usage: Usage): Record<string, number> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** The generated text of a message or a delta: what the model was paid to write. */
function textOfMessage(message: Record<string, unknown>): string {
  let text = '';
  // reasoning_content: vLLM and DeepSeek reasoning models; reasoning: Ollama.
  for (const field of ['content', 'refusal', 'reasoning_content', 'reasoning']) {
    const value = message[field];
    if (typeof value === 'string') text += value;
  }
  if (Array.isArray(message.tool_calls)) {
    for (const toolCall of message.tool_calls) {
      if (!isRecord(toolCall) || !isRecord(toolCall.function)) continue;
      const { name, arguments: args } = toolCall.function;
      if (typeof name === 'string') text += name;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}
