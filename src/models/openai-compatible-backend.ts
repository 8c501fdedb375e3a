// Models served by upstreams: OpenAI-compatible servers (vLLM, Ollama, llama.cpp's server,
// LM Studio, OpenAI itself, any /v1 server) and Anthropic's API. A model has one or more
// deployments; each call picks one (weighted, preferring the least busy, skipping those
// cooling down) and runs on it through the adapter of the deployment's kind
// (upstream/providers.ts), whose exchange speaks that provider's wire and meters the
// answer (upstream/usage-meter.ts). A deployment that speaks OpenAI's Responses API
// (`responses: native`) also takes /v1/responses as it is (upstream/responses-exchange.ts),
// and one with `completions: native` /v1/completions. Failover, circuit breakers and
// limits are the same for every kind and API.
//
// Failures before the client has seen anything (refused, reset, 5xx, 429, timeouts,
// garbage) move on to another deployment; after the first chunk has gone out the stream
// ends with an error and the client is charged for what it got.
import { Pool } from 'undici';
import type {
  BackendCall,
  ChatBackend,
  ChunkSink,
  CompletionResult,
  EmbeddingBackend,
  EmbeddingCall,
  NamedEventSink,
  ResponsesBackend,
  TextCompletionBackend,
  ResponsesCall,
  StreamResult,
} from './backend.js';
import { sleepMs } from './abortable-sleep.js';
import { finalError } from './upstream/attempt-failure.js';
import { AttemptFailure, ClientGoneError } from '../errors.js';
import { Deployment, type DeploymentObserver, type UpstreamDeployment } from './upstream/deployment.js';
import type { Exchange, UpstreamCall } from './upstream/exchange.js';
import { CompletionExchange, StreamExchange } from './upstream/chat-exchange.js';
import { PROVIDERS, type ProviderAdapter } from './upstream/providers.js';
import { EmbeddingExchange } from './upstream/embedding-exchange.js';
import { ResponseExchange, ResponseStreamExchange } from './upstream/responses-exchange.js';
import { countTokensUpstream } from './upstream/token-count.js';

export type { UpstreamDeployment, UpstreamTimeouts } from './upstream/deployment.js';

export interface OpenAICompatibleBackendOptions {
  /** lmgate's id of the model (labels the deployments in metrics). */
  modelId?: string;
  deployments: UpstreamDeployment[];
  /** Uniform in [0, 1): the weighted pick and the retry jitter. Tests pin it. */
  random?: () => number;
  /** The circuit breakers' clock. Tests pin it. */
  now?: () => number;
  observer?: DeploymentObserver;
}

export interface OpenAICompatibleBackend extends ChatBackend, EmbeddingBackend, ResponsesBackend, TextCompletionBackend {
  /** Always a promise: the answer comes over the network. */
  complete(call: BackendCall): Promise<CompletionResult>;
  /** The deployments' /embeddings, with the same failover. */
  embed(call: EmbeddingCall): Promise<CompletionResult>;
  /** The deployments' /responses (those that speak it), with the same failover. */
  respond(call: ResponsesCall): Promise<CompletionResult>;
  streamResponse(call: ResponsesCall, sink: NamedEventSink): Promise<StreamResult>;
  /**
   * A Messages request's input tokens as a deployment with `count_tokens: native` counts
   * them; undefined when none does, or none answered.
   */
  countTokens(request: Record<string, unknown>): Promise<number | undefined>;
  /** Closes the keep-alive pools once their requests have finished (shutdown). */
  close(): Promise<void>;
  readonly deployments: readonly Deployment[];
}

// Between two attempts: long enough not to hammer a struggling fleet in lockstep, short
// enough that a failover stays well under a second.
const RETRY_BACKOFF_MIN_MS = 50;
const RETRY_BACKOFF_JITTER_MS = 100;

export function createOpenAICompatibleBackend(options: OpenAICompatibleBackendOptions): OpenAICompatibleBackend {
  const random = options.random ?? Math.random;
  const observer = options.observer;
  const pools = new Map<string, Pool>();
  const deployments = options.deployments.map((config, index) => {
    const url = new URL(config.url);
    // One keep-alive pool per origin (and connect timeout, a pool-wide setting), shared
    // by the deployments that live there; the other timeouts are set per request.
    const poolKey = `${url.origin} ${config.timeouts.connectMs}`;
    let pool = pools.get(poolKey);
    if (pool === undefined) {
      pool = new Pool(url.origin, { connect: { timeout: config.timeouts.connectMs } });
      pools.set(poolKey, pool);
    }
    return new Deployment(options.modelId ?? '', index, config, pool, providerOf(config), options.now);
  });

  /** Weighted random among the untried deployments that take requests now. */
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
   * Runs an exchange on one deployment after another until one succeeds, at most once per
   * deployment. Only an AttemptFailure moves on; anything else (an upstream 4xx, the
   * client gone) ends the call as it is. `aborted` gives the outcome once the client has gone.
   */
  async function withFailover<T, C extends UpstreamCall>(call: C, attempt: (deployment: Deployment) => Exchange<T, C>, aborted: () => T): Promise<T> {
    const tried = new Set<Deployment>();
    const failures: AttemptFailure[] = [];
    for (let attemptNo = 0; attemptNo < deployments.length; attemptNo++) {
      if (attemptNo > 0) await sleepMs(RETRY_BACKOFF_MIN_MS + random() * RETRY_BACKOFF_JITTER_MS, call.client);
      if (call.client.aborted) return aborted();
      const deployment = pick(tried);
      if (deployment === undefined) break;
      tried.add(deployment);
      deployment.inFlight++;
      deployment.breaker.onAttempt();
      const exchange = attempt(deployment);
      try {
        return await exchange.result;
      } catch (err) {
        if (!(err instanceof AttemptFailure)) throw err;
        failures.push(err);
      } finally {
        deployment.inFlight--;
        recordHealth(deployment, exchange);
        observer?.attemptEnded(deployment, exchange.outcome, exchange.firstByteSec);
      }
    }
    if (call.client.aborted) return aborted();
    throw finalError(failures);
  }

  function complete(call: BackendCall): Promise<CompletionResult> {
    return withFailover(call, (deployment) => providerOf(deployment.config).complete(call, deployment), clientGone);
  }

  function stream(call: BackendCall, sink: ChunkSink): Promise<StreamResult> {
    return withFailover(call, (deployment) => providerOf(deployment.config).stream(call, deployment, sink), () => nothingGenerated(call));
  }

  /** Legacy completions passed through to the deployments' own /completions (`completions: native`). */
  function completeText(call: BackendCall): Promise<CompletionResult> {
    return withFailover(call, (deployment) => new CompletionExchange(call, deployment, deployment.completionsPath), clientGone);
  }

  function streamText(call: BackendCall, sink: ChunkSink): Promise<StreamResult> {
    return withFailover(call, (deployment) => new StreamExchange(call, deployment, sink, deployment.completionsPath), () => nothingGenerated(call));
  }

  function embed(call: EmbeddingCall): Promise<CompletionResult> {
    return withFailover(
      call,
      (deployment) => new EmbeddingExchange(call, deployment),
      clientGone,
    );
  }

  function respond(call: ResponsesCall): Promise<CompletionResult> {
    return withFailover(
      call,
      (deployment) => new ResponseExchange(call, deployment),
      clientGone,
    );
  }

  function streamResponse(call: ResponsesCall, sink: NamedEventSink): Promise<StreamResult> {
    return withFailover(
      call,
      (deployment) => new ResponseStreamExchange(call, deployment, sink),
      () => nothingGenerated(call),
    );
  }

  async function countTokens(request: Record<string, unknown>): Promise<number | undefined> {
    for (const deployment of deployments) {
      if (deployment.config.countTokens !== 'native' || !deployment.breaker.allows()) continue;
      const counted = await countTokensUpstream(deployment, request);
      if (counted !== undefined) return counted;
    }
    return undefined;
  }

  async function close(): Promise<void> {
    await Promise.all([...pools.values()].map((pool) => pool.close()));
  }

  return { complete, stream, completeText, streamText, embed, respond, streamResponse, countTokens, close, deployments };
}

function providerOf(config: UpstreamDeployment): ProviderAdapter {
  return PROVIDERS[config.kind ?? 'openai'];
}

/** A whole answer whose client has gone: nobody is left to give it to. */
function clientGone(): never {
  throw new ClientGoneError();
}

/** A stream whose client went before anything came back: nothing was generated for it. */
function nothingGenerated(call: { promptTokens: number }): StreamResult {
  return { usage: { promptTokens: call.promptTokens, completionTokens: 0, basis: 'counted' }, finishReason: null };
}

/** What an attempt says about the deployment's health, for its circuit breaker. */
function recordHealth<T, C extends UpstreamCall>(deployment: Deployment, exchange: Exchange<T, C>): void {
  const { breaker } = deployment;
  switch (exchange.outcome) {
    case 'ok':
    case 'rejected': // the upstream is up; the request was the problem
      return breaker.onSuccess();
    case 'aborted':
      return breaker.onInconclusive();
    case 'server_error':
      return breaker.onServerError(exchange.requestFingerprint());
    case 'busy':
      if (exchange.retryAfterMs !== undefined) return breaker.pauseFor(exchange.retryAfterMs);
      return breaker.onFailure();
    default:
      return breaker.onFailure();
  }
}
