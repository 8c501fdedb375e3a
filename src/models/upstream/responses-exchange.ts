// One Responses API request to a deployment that speaks it (`responses: native`), on its
// /responses: the client's request with only `model` changed and `store: false` (nothing
// is kept upstream that lmgate could not tie to the account it belongs to), the answer
// shown with lmgate's model id, whole or as its typed events, relayed as they arrive.
// Usage is the upstream's input_tokens and output_tokens; where none came (a stream cut
// short), lmgate's count of what the client was sent.
import { AttemptFailure } from '../../errors.js';
import { FINAL_RESPONSE_EVENTS, finishReasonOfResponse, outputTextOfResponse, responseUsageJson } from '../../responses/response-wire.js';
import type { NamedEventSink, ResponsesCall, StreamResult } from '../backend.js';
import type { Deployment } from './deployment.js';
import { EventStreamExchange, WholeAnswerExchange } from './exchange.js';
import { UsageMeter } from './usage-meter.js';
import { usageOfResponse } from './usage-readers.js';
import { isPlainObject, isRecord, parsedOrNull, textStringMember, upstreamRequestText } from './wire.js';

/** How OpenAI's events begin: the type read off the text, without parsing a delta. */
const TYPE_PREFIX = '{"type":"';
const EVENT_TYPE = /^[\w.]+$/;
/** What a response says before it has any output: held, so that another deployment may still answer. */
const OPENING_EVENTS: ReadonlySet<string> = new Set(['response.created', 'response.queued', 'response.in_progress']);

/** A whole response: read, then shown with lmgate's model id. */
export class ResponseExchange extends WholeAnswerExchange<ResponsesCall> {
  constructor(call: ResponsesCall, deployment: Deployment) {
    super(call, deployment);
    this.start(responsesRequestText(call, deployment.config.model), false, deployment.responsesPath);
  }

  protected read(text: string): void {
    const answer = this.parsed(text);
    if (answer === undefined) return;
    if (!isRecord(answer) || answer.object !== 'response' || !Array.isArray(answer.output)) {
      return this.fail(new AttemptFailure('bad_answer', 'upstream answer is not a response', this.deployment.label));
    }
    const meter = new UsageMeter({ promptTokens: this.call.promptTokens });
    const reported = usageOfResponse(answer.usage);
    if (reported !== null) meter.report(reported);
    else meter.text(0, outputTextOfResponse(answer));
    const usage = meter.usage();
    if (reported === null) answer.usage = responseUsageJson(usage);
    answer.model = this.call.modelId;
    this.succeed({ body: JSON.stringify(answer), usage, finishReason: finishReasonOfResponse(answer) }, 'ok');
  }
}

/** A streamed response: each typed event relayed under its own name as it arrives, paced by the client's socket. */
export class ResponseStreamExchange extends EventStreamExchange<ResponsesCall> {
  private sentEvents = 0;
  /** The opening events, as [type, text], until something follows them. */
  private held: [string, string][] = [];
  /** The final event came (response.completed, .incomplete or .failed). */
  private isDone = false;
  private finishReason: string | null = null;
  /** The final event's usage; the deltas' text where it has none. */
  private readonly meter: UsageMeter;

  constructor(
    call: ResponsesCall,
    deployment: Deployment,
    private readonly sink: NamedEventSink,
  ) {
    super(call, deployment, sink);
    this.meter = new UsageMeter({ promptTokens: call.promptTokens });
    this.start(responsesRequestText(call, deployment.config.model), true, deployment.responsesPath);
  }

  protected relayEvent(data: string): boolean {
    if (data === '[DONE]') return false;
    // Deltas are most of a stream and carry neither model nor usage: relayed unparsed.
    let type = typeOfText(data);
    let text = data;
    if (type === undefined || !type.endsWith('.delta') || !isPlainObject(data)) {
      const event = this.parsedEvent(data);
      type = event.type;
      const { response } = event;
      if (isRecord(response)) {
        if (typeof response.model === 'string' && response.model !== this.call.modelId) {
          response.model = this.call.modelId;
          text = JSON.stringify(event);
        }
        if (FINAL_RESPONSE_EVENTS.has(type)) this.noteEnd(response);
      }
    } else if (!this.meter.isReported) {
      const delta = textStringMember(data, 'delta"') ?? parsedOrNull(data)?.delta;
      if (typeof delta === 'string') this.meter.text(0, delta);
    }
    if (this.sentEvents === 0 && OPENING_EVENTS.has(type)) {
      this.held.push([type, text]);
      return false;
    }
    for (const [heldType, heldText] of this.held.splice(0)) this.send(heldType, heldText);
    return !this.send(type, text);
  }

  private send(type: string, text: string): boolean {
    this.sentEvents++;
    return this.sink.sendEvent(type, text);
  }

  protected get isComplete(): boolean {
    return this.isDone;
  }

  protected get hasSent(): boolean {
    return this.sentEvents > 0;
  }

  protected finished(): StreamResult {
    return { usage: this.meter.usage(), finishReason: this.finishReason };
  }

  protected partial(): StreamResult {
    return { usage: this.meter.usage(), finishReason: null };
  }

  /** Any event but a delta, parsed and checked; an `error` event fails the attempt. */
  private parsedEvent(data: string): Record<string, unknown> & { type: string } {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch (err) {
      throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.deployment.label, err);
    }
    // The type names the event on the client's stream: a word with dots, never a line break.
    if (!isRecord(event) || typeof event.type !== 'string' || !EVENT_TYPE.test(event.type)) throw new AttemptFailure('bad_answer', 'upstream sent a malformed event', this.deployment.label);
    if (event.type === 'error') throw new AttemptFailure('bad_answer', 'upstream reported an error mid-stream', this.deployment.label, new Error(data));
    return event as Record<string, unknown> & { type: string };
  }

  private noteEnd(response: Record<string, unknown>): void {
    this.isDone = true;
    this.finishReason = finishReasonOfResponse(response);
    const reported = usageOfResponse(response.usage);
    if (reported !== null) this.meter.report(reported);
  }
}

/** An event's type read off its text when it comes first, as OpenAI writes it; else undefined. */
function typeOfText(data: string): string | undefined {
  if (!data.startsWith(TYPE_PREFIX)) return undefined;
  const end = data.indexOf('"', TYPE_PREFIX.length);
  const type = end === -1 ? '' : data.slice(TYPE_PREFIX.length, end);
  return EVENT_TYPE.test(type) ? type : undefined;
}

/**
 * The client's request for the upstream: `model` its name there, and `store: false`. The
 * client's text changed in place when it can be, else serialized.
 */
function responsesRequestText(call: ResponsesCall, upstreamModel: string): string {
  const { store } = call.body;
  if (call.requestText !== undefined && (store === undefined || store === false)) {
    const renamed = upstreamRequestText(call.requestText, call.modelId, upstreamModel, false);
    if (renamed !== undefined) return store === false ? renamed : `{"store":false,${renamed.slice(renamed.indexOf('{') + 1)}`;
  }
  return JSON.stringify({ ...call.body, model: upstreamModel, store: false });
}
