// POST chat/completions: the recipe of the request path, each step delegated to its domain.
// Steps 1–3 (key, account and subscription, requests per minute unless the admission takes it
// at admission) ran in the API plugin's onRequest hook; this route takes it from the body on.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppServices } from '../../services.js';
import { admitRequest, chargeMicros, MeteredRequest } from '../../billing/metering.js';
import type { Pass } from '../../billing/admission.js';
import { formatCredits } from '../../billing/money.js';
import type { Usage } from '../../billing/usage.js';
import { assertTierAllowsModel } from '../../billing/tiers.js';
import { planTokens } from '../../chat/plan.js';
import { validateChatRequest } from '../../chat/validate.js';
import { ShuttingDownError, UnsupportedMediaTypeError } from '../../errors.js';
import { andThen, type MaybePromise } from '../../maybe-promise.js';
import type { BackendCall, ChatBackend, ClientLink, CompletionResult } from '../../models/backend.js';
import type { ModelEntry } from '../../models/catalog.js';
import { logFailure } from '../error-handler.js';
import { renderError, renderStreamError, statusOf } from '../error-reply.js';
import { rateLimitHeaders } from '../rate-limit-headers.js';
import type { InFlight, Stoppable } from '../in-flight.js';
import { EventStream } from '../sse.js';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 };
/** nginx's convention for "client closed the request", used in usage records. */
const CLIENT_CLOSED = 499;
/** On a whole answer: the balance left after its charge, in credits. */
const BALANCE_HEADER = 'x-lmgate-balance';

export function chatCompletionsRoute(api: FastifyInstance, services: AppServices): void {
  // Not an async function: an instant answer (echo) goes out without an await, which on
  // this path costs more than the answer itself. Sync throws reach the error handler
  // just like rejections.
  api.post('/chat/completions', { config: { admitsRequest: true } }, (request, reply) => {
    const { key, account, tier } = request.principal!;
    const pass = services.admission.open({ accountId: account.id, tier });
    // A request refused before it reaches a model gives back what it took.
    const refuse = (err: unknown): never => {
      pass.refuse();
      throw err;
    };
    let admitted: MaybePromise<Admitted>;
    try {
      requireJsonBody(request);
      const chat = validateChatRequest(request.body);
      const model = services.catalog.resolve(chat.model);
      assertTierAllowsModel(tier, model.id);
      // Counting a long prompt is the costliest step before the model: an account with
      // nothing left is refused before it.
      admitted = andThen(pass.requireCredit(), () =>
        andThen(planTokens(chat, model), (plan) =>
          andThen(admitRequest(pass, model, plan), ({ requests }): Admitted => {
            if (requests) reply.headers(rateLimitHeaders(requests));
            return { model, call: backendCall(chat, request.rawJson, model, plan, reply, pass) };
          }),
        ),
      );
    } catch (err) {
      return refuse(err);
    }

    const begin = ({ model, call }: Admitted): string | Promise<string | FastifyReply> => {
      const identity = { requestId: request.id, accountId: account.id, keyId: key.id, tier, model, streamed: call.request.stream === true };
      const metered = new MeteredRequest(identity, pass);
      if (identity.streamed) return streamCompletion(request, reply, model.backend, call, metered, services.inFlight);
      reply.type('application/json; charset=utf-8');
      return completeNow(model.backend, call, metered, services.inFlight);
    };
    if (admitted instanceof Promise) return admitted.then(begin, refuse);
    return begin(admitted);
  });
}

/** A request past every check, with its credits reserved, ready for its backend. */
interface Admitted {
  model: ModelEntry;
  call: ClientCall;
}

function backendCall(
  chat: BackendCall['request'],
  text: string | null,
  model: ModelEntry,
  plan: { promptTokens: number; maxOutputTokens: number },
  reply: FastifyReply,
  pass: Pass,
): ClientCall {
  const includeUsage = chat.stream === true && chat.stream_options?.include_usage === true;
  return new ClientCall(chat, text ?? undefined, model, plan.promptTokens, plan.maxOutputTokens, includeUsage, reply, pass);
}

/**
 * A BackendCall that is its own ClientLink (a class: one shape for all). It listens for
 * the client's disconnect only once a backend asks: an instant answer never does. A
 * shutdown's drain stops it the same way, with the client still there to be told.
 */
class ClientCall implements BackendCall, ClientLink, Stoppable {
  private abortListeners: (() => void)[] | undefined;
  private isGone = false;
  /** Ended by the shutdown's drain, not by the client. */
  stopped = false;

  readonly modelId: string;

  constructor(
    readonly request: BackendCall['request'],
    readonly requestText: string | undefined,
    private readonly model: ModelEntry,
    readonly promptTokens: number,
    readonly maxOutputTokens: number,
    readonly includeUsage: boolean,
    readonly reply: FastifyReply,
    private readonly pass: Pass,
  ) {
    this.modelId = model.id;
  }

  chargeMicros(usage: Usage): number {
    return chargeMicros(this.model, usage, this.pass.reservedMicros);
  }

  get client(): ClientLink {
    return this;
  }

  get aborted(): boolean {
    const res = this.reply.raw;
    return this.isGone || (res.destroyed && !res.writableFinished);
  }

  onAbort(listener: () => void): () => void {
    if (this.aborted) {
      listener();
      return NOTHING_TO_STOP;
    }
    if (this.abortListeners === undefined) {
      const listeners: (() => void)[] = [];
      this.abortListeners = listeners;
      const res = this.reply.raw;
      res.once('close', () => {
        if (!res.writableFinished) this.gone();
      });
    }
    const listeners = this.abortListeners;
    listeners.push(listener);
    return () => {
      const at = listeners.indexOf(listener);
      if (at !== -1) listeners.splice(at, 1);
    };
  }

  stop(): void {
    this.stopped = true;
    this.gone();
  }

  private gone(): void {
    this.isGone = true;
    for (const each of this.abortListeners?.splice(0) ?? []) each();
  }
}

const NOTHING_TO_STOP = (): void => {};

/** Steps 7–8 without streaming: the whole answer, then the bill. */
function completeNow(backend: ChatBackend, call: ClientCall, metered: MeteredRequest, inFlight: InFlight): string | Promise<string> {
  const settle = (result: CompletionResult): string => {
    const balanceMicros = metered.finish(result.usage, 200, result.finishReason);
    if (balanceMicros !== undefined) call.reply.header(BALANCE_HEADER, formatCredits(balanceMicros));
    return result.body;
  };
  let answer: CompletionResult | Promise<CompletionResult>;
  try {
    answer = backend.complete(call);
  } catch (err) {
    metered.finish(NO_USAGE, statusAfter(err, call), null);
    throw err;
  }
  if (!(answer instanceof Promise)) return settle(answer);
  // Only an answer that takes time can outlive a drain.
  inFlight.add(call);
  return answer.then(
    (result) => {
      inFlight.delete(call);
      return settle(result);
    },
    (err: unknown) => {
      inFlight.delete(call);
      metered.finish(NO_USAGE, statusAfter(err, call), null);
      throw call.stopped ? new ShuttingDownError() : err;
    },
  );
}

/**
 * Steps 7–8 streaming: SSE from the backend, then the bill for what was generated. The
 * status line waits for the first chunk, so a backend that fails before it (every
 * upstream down, an upstream 4xx) still answers with its own status and error body.
 */
async function streamCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  backend: ChatBackend,
  call: ClientCall,
  metered: MeteredRequest,
  inFlight: InFlight,
): Promise<FastifyReply> {
  reply.hijack();
  const res = reply.raw;
  // The headers set so far (x-request-id, X-RateLimit-*) go out with the stream's.
  const events = new EventStream(res, () => reply.getHeaders() as Record<string, string>);
  inFlight.add(call);
  try {
    const result = await backend.stream(call, events);
    // Stopped by the drain: what was generated is charged, and the client told why it ends.
    const error = call.stopped ? new ShuttingDownError() : result.error;
    const status = error ? statusOf(error) : call.client.aborted ? CLIENT_CLOSED : 200;
    metered.finish(result.usage, status, result.finishReason);
    events.end(error && renderStreamError(error, request.id));
  } catch (thrown) {
    const err = call.stopped ? new ShuttingDownError() : thrown;
    metered.finish(NO_USAGE, statusAfter(thrown, call), null);
    logFailure(request, err);
    if (events.hasStarted) {
      // The status line is gone: the failure becomes the stream's last event.
      events.end(renderStreamError(err, request.id));
    } else if (!res.destroyed) {
      const rendered = renderError(err, request.id);
      res.writeHead(rendered.status, { ...(reply.getHeaders() as Record<string, string>), ...rendered.headers, 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(rendered.body));
    }
  } finally {
    inFlight.delete(call);
  }
  return reply;
}

function statusAfter(err: unknown, call: ClientCall): number {
  if (call.stopped) return statusOf(new ShuttingDownError());
  return call.client.aborted ? CLIENT_CLOSED : statusOf(err);
}

/** The spec's requests carry `Content-Type: application/json`; anything else is 415. */
function requireJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined || !/^application\/json\s*(;|$)/i.test(type)) throw new UnsupportedMediaTypeError(type);
}
