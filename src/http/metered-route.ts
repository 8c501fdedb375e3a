// The request path every metered endpoint shares, from the body on (steps 1–3, key,
// account and requests per minute, ran in the API plugin's onRequest hook): the
// concurrency slot, content type, validation, the model, the tier, credit, the token
// plan, admission with the worst case reserved, the backend with the client's disconnect
// and the drain, the bill, and the answer whole or streamed. An endpoint supplies what is
// its own: how its body is read, how a backend answers it, and how its answers and
// errors look on the wire (a MeteredEndpoint).
import { spendLimitsOf } from '../billing/spend-limit.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../services.js';
import { assertKeyAllowsModel } from '../auth/key-controls.js';
import { admitRequest, MeteredRequest } from '../billing/metering.js';
import { costMicros, type PriceScale } from '../billing/pricing.js';
import { formatCredits } from '../money.js';
import { consistentUsage, type Usage } from '../billing/usage.js';
import type { UsageOutcome } from '../store/usage-basis.js';
import { assertTierAllowsModel } from '../billing/tiers.js';
import type { TokenPlan } from '../chat/plan.js';
import type { ModelEndpoint } from '../config/schema.js';
import { ShuttingDownError, UnsupportedMediaTypeError } from '../errors.js';
import { andThen, attempt, type MaybePromise } from '../maybe-promise.js';
import type { CompletionResult, StreamResult } from '../models/backend.js';
import type { ModelEntry } from '../models/catalog.js';
import { ClientConnection } from './client-connection.js';
import { logFailure } from './error-handler.js';
import { renderError, renderStreamError, statusOf, type ErrorReply } from './error-reply.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import type { InFlight } from './in-flight.js';
import { EventStream, type EventFraming } from './sse.js';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };
/** nginx's convention for "client closed the request", used in usage records. */
const CLIENT_CLOSED = 499;

/** On a whole answer: the balance left after its charge, in credits. */
const BALANCE_HEADER = 'x-lmgate-balance';

/** A request past every check, with its credits reserved, ready for its backend. */
export interface MeteredCall<Req> {
  request: Req;
  /** The body as the client sent it (an upstream may get it with only `model` changed). */
  rawJson: string | null;
  model: ModelEntry;
  plan: TokenPlan;
  scale: PriceScale;
  client: ClientConnection;
  /** Micro-credits a request that used `usage` costs: price × usage, kind by kind, scaled by its tier's and account's multipliers. */
  chargeMicros(usage: Usage): number;
}

/**
 * How errors look on an endpoint's wire. Errors thrown before the answer begins reach the
 * error handler of the route's plugin scope, which must render them the same way.
 */
export interface ErrorSurface {
  /** A whole error response (a stream whose backend failed before its first event). */
  render(err: unknown, requestId: string): ErrorReply;
  /** The error as a stream's last frame, SSE framing included, once the status line is gone. */
  streamFrame(err: unknown, requestId: string): string;
}

/** What one endpoint brings to the shared path. */
export interface MeteredEndpoint<Req> {
  /** Which of a model's endpoints this is: a model that does not serve it is refused (422). */
  endpoint: ModelEndpoint;
  /** Reads and validates the body (422 with one entry per invalid field). */
  parse(body: unknown): Req;
  modelOf(request: Req): string;
  /** Prompt tokens and the output ceiling (422 past the context). */
  plan(request: Req, model: ModelEntry): MaybePromise<TokenPlan>;
  /**
   * The whole answer, as the endpoint's body text. Returned directly when the backend has
   * it at once: on the hot path one await costs more than an entire echo answer.
   */
  answer(call: MeteredCall<Req>): CompletionResult | Promise<CompletionResult>;
  /** How it streams, for an endpoint that does. */
  streaming?: StreamingAnswer<Req>;
  errors: ErrorSurface;
}

export interface StreamingAnswer<Req> {
  isStreamed(request: Req): boolean;
  /** The answer as events into `events`; never ends it (the path does, with `framing.done`). */
  stream(call: MeteredCall<Req>, events: EventStream): Promise<StreamResult>;
  framing: EventFraming;
}

/** The unified error body of the spec, and OpenAI's `data: {"error": ...}` event mid-stream. */
export const API_ERROR_SURFACE: ErrorSurface = {
  render: (err, requestId) => renderError(err, requestId),
  streamFrame: (err, requestId) => `data: ${renderStreamError(err, requestId)}\n\n`,
};

export function meteredRoute<Req>(api: FastifyInstance, services: AppServices, path: string, endpoint: MeteredEndpoint<Req>): void {
  // Not an async function: an instant answer (echo) goes out without an await, which on
  // this path costs more than the answer itself. Sync throws reach the error handler
  // just like rejections.
  api.post(path, { config: { admitsRequest: true } }, (request, reply) => {
    const { key, account, tier, budgets } = request.principal!;
    const pass = services.admission.open({ accountId: account.id, tier, spendLimits: spendLimitsOf(key, budgets) });
    // A request refused before it reaches a model gives back what it took, and like any
    // authenticated answer tells where its requests per minute stand (in shared mode none
    // was taken yet: admission takes it).
    const refuse = (err: unknown): MaybePromise<never> => {
      pass.refuse();
      if (reply.hasHeader('x-ratelimit-limit')) throw err;
      // Limits that cannot be read leave the refusal as it is.
      return attempt(
        () => services.admission.limits({ accountId: account.id, tier }),
        (snapshot): never => {
          reply.headers(rateLimitHeaders(snapshot.requests));
          throw err;
        },
        (): never => {
          throw err;
        },
      );
    };
    let admitted: MaybePromise<MeteredCall<Req>>;
    try {
      requireJsonBody(request);
      const parsed = endpoint.parse(request.body);
      const model = services.catalog.resolve(endpoint.modelOf(parsed), endpoint.endpoint);
      assertTierAllowsModel(tier, model.id);
      assertKeyAllowsModel(key, model.id);
      // Counting a long prompt is the costliest step before the model: an account with
      // nothing left is refused before it.
      const scale: PriceScale = { tierPpm: tier.multiplierPpm, accountPpm: account.priceMultiplierPpm };
      admitted = andThen(pass.requireCredit(), () =>
        andThen(endpoint.plan(parsed, model), (plan) =>
          andThen(admitRequest(pass, model, plan, scale), ({ requests }): MeteredCall<Req> => {
            if (requests) reply.headers(rateLimitHeaders(requests));
            // The parts cut to their totals, as MeteredRequest.finish records them: the cost shown
            // in-band is the one charged, whatever an upstream reported.
            const charge = (usage: Usage): number => costMicros(model, consistentUsage(usage), scale);
            return { request: parsed, rawJson: request.rawJson, model, plan, scale, client: new ClientConnection(reply), chargeMicros: charge };
          }),
        ),
      );
    } catch (err) {
      return refuse(err);
    }

    const begin = (call: MeteredCall<Req>): string | Promise<string | FastifyReply> => {
      const { streaming } = endpoint;
      const streamed = streaming !== undefined && streaming.isStreamed(call.request);
      const identity = { requestId: request.id, accountId: account.id, keyId: key.id, memberId: key.memberId, tier, model: call.model, scale: call.scale, streamed };
      const metered = new MeteredRequest(identity, pass, call.plan);
      request.admitted = true;
      if (streamed) return streamAnswer(request, reply, streaming, endpoint.errors, call, metered, services.inFlight);
      reply.type('application/json; charset=utf-8');
      return answerNow(endpoint, call, metered, services.inFlight, reply);
    };
    if (admitted instanceof Promise) return admitted.then(begin, refuse);
    return begin(admitted);
  });
}

/** Steps 7–8 without streaming: the whole answer, then the bill; the body once the charge is durable. */
function answerNow<Req>(endpoint: MeteredEndpoint<Req>, call: MeteredCall<Req>, metered: MeteredRequest, inFlight: InFlight, reply: FastifyReply): string | Promise<string> {
  const settle = (result: CompletionResult): string | Promise<string> => {
    const { balanceMicros, durable } = metered.finish(result.usage, 200, result.finishReason, 'completed');
    if (balanceMicros !== undefined) reply.header(BALANCE_HEADER, formatCredits(balanceMicros));
    return durable ? durable.then(() => result.body) : result.body;
  };
  let answer: CompletionResult | Promise<CompletionResult>;
  try {
    answer = endpoint.answer(call);
  } catch (err) {
    finishFailed(metered, err, call.client);
    throw err;
  }
  if (!(answer instanceof Promise)) return settle(answer);
  // Only an answer that takes time can outlive a drain.
  const { client } = call;
  inFlight.add(client);
  return answer.then(
    (result) => {
      inFlight.delete(client);
      return settle(result);
    },
    (err: unknown) => {
      inFlight.delete(client);
      finishFailed(metered, err, client);
      throw client.stopped ? new ShuttingDownError() : err;
    },
  );
}

/**
 * Steps 7–8 streaming: events from the backend, then the bill for what was generated, and
 * the last frame once that charge is durable. The status line waits for the first event,
 * so a backend that fails before it (every upstream down, an upstream 4xx) still answers
 * with its own status and error body.
 */
async function streamAnswer<Req>(
  request: FastifyRequest,
  reply: FastifyReply,
  streaming: StreamingAnswer<Req>,
  errors: ErrorSurface,
  call: MeteredCall<Req>,
  metered: MeteredRequest,
  inFlight: InFlight,
): Promise<FastifyReply> {
  reply.hijack();
  const res = reply.raw;
  const { client } = call;
  // The headers set so far (x-request-id, X-RateLimit-*) go out with the stream's.
  const events = new EventStream(res, () => reply.getHeaders() as Record<string, string>, streaming.framing);
  inFlight.add(client);
  try {
    const result = await streaming.stream(call, events);
    // Stopped by the drain: what was generated is charged, and the client told why it ends.
    const error = client.stopped ? new ShuttingDownError() : result.error;
    const status = error ? statusOf(error) : client.aborted ? CLIENT_CLOSED : 200;
    const { durable } = metered.finish(result.usage, status, result.finishReason, outcomeOf(status, client));
    // The last frame once the charge is durable: a client that has it was billed.
    if (durable && !client.aborted) await durable;
    events.end(error && errors.streamFrame(error, request.id));
  } catch (thrown) {
    const err = client.stopped ? new ShuttingDownError() : thrown;
    finishFailed(metered, thrown, client);
    logFailure(request, err);
    if (events.hasStarted) {
      // The status line is gone: the failure becomes the stream's last event.
      events.end(errors.streamFrame(err, request.id));
    } else if (!res.destroyed) {
      const rendered = errors.render(err, request.id);
      res.writeHead(rendered.status, { ...(reply.getHeaders() as Record<string, string>), ...rendered.headers, 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(rendered.body));
    }
  } finally {
    inFlight.delete(client);
  }
  return reply;
}

/** A backend that threw before answering: nothing served, nothing charged. */
function finishFailed(metered: MeteredRequest, err: unknown, client: ClientConnection): void {
  const status = statusAfter(err, client);
  metered.finish(NO_USAGE, status, null, outcomeOf(status, client));
}

function outcomeOf(status: number, client: ClientConnection): UsageOutcome {
  if (client.stopped) return 'drained';
  if (status === CLIENT_CLOSED) return 'client_gone';
  return status === 200 ? 'completed' : 'upstream_failed';
}

function statusAfter(err: unknown, client: ClientConnection): number {
  if (client.stopped) return statusOf(new ShuttingDownError());
  return client.aborted ? CLIENT_CLOSED : statusOf(err);
}

/** The spec's requests carry `Content-Type: application/json`; anything else is 415. */
export function requireJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError(type);
}
