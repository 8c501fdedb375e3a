// One upstream deployment of a model: where it is, how to talk to it, and how it is doing.
import type { Pool } from 'undici';
import { CircuitBreaker, type CircuitBreakerOptions } from './circuit-breaker.js';

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

/** The API a deployment speaks: OpenAI's chat completions (the default) or Anthropic's Messages API. */
export type ProviderKind = 'openai' | 'anthropic';

/** What a deployment's provider decides of its addressing (providers.ts). */
export interface ProviderWire {
  /** Where a chat call goes, under the deployment's base URL. */
  readonly chatPath: string;
  /** The headers that carry the deployment's key (and the API version, where the provider asks one). */
  authHeaders(apiKey: string | undefined, apiVersion: string | undefined): Record<string, string>;
}

export interface UpstreamDeployment {
  kind?: ProviderKind;
  /** Base URL ending in /v1, e.g. http://10.0.0.5:8000/v1. */
  url: string;
  /** The upstream's name for the model. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` (Anthropic: `x-api-key`) when set. Never logged, never in a message. */
  apiKey?: string;
  /** Anthropic's `anthropic-version` header (kind anthropic). */
  anthropicVersion?: string;
  /** Share of the traffic relative to the model's other deployments; 0 takes none. */
  weight: number;
  /** Requests in flight at most; a full deployment is skipped. */
  maxConcurrent: number;
  /** `native`: /v1/messages/count_tokens asks its /messages/count_tokens; else lmgate estimates. */
  countTokens?: 'estimate' | 'native';
  timeouts: UpstreamTimeouts;
  circuitBreaker: Omit<CircuitBreakerOptions, 'now'>;
}

/** How one attempt on a deployment ended, for metrics. */
export type AttemptOutcome = 'ok' | 'rejected' | 'unreachable' | 'busy' | 'bad_answer' | 'timeout' | 'server_error' | 'aborted';

/** Watches attempts (metrics). Called on the request path: must be cheap and never throw. */
export interface DeploymentObserver {
  /** `firstByteSec`: time to the response headers, when they came. */
  attemptEnded(deployment: Deployment, outcome: AttemptOutcome, firstByteSec: number | undefined): void;
}

const MAX_UPSTREAM_MESSAGE_CHARS = 1000;
const REDACTED = '[redacted]';

export class Deployment {
  inFlight = 0;
  readonly breaker: CircuitBreaker;
  /** The chat completions path. */
  readonly path: string;
  readonly embeddingsPath: string;
  /** The legacy completions path, for a deployment that takes /v1/completions as it is. */
  readonly completionsPath: string;
  /** Anthropic's token counting path (which llama.cpp's server answers too). */
  readonly countTokensPath: string;
  /** The Responses API's path, for a deployment that speaks it. */
  readonly responsesPath: string;
  readonly jsonHeaders: Record<string, string>;
  readonly streamHeaders: Record<string, string>;
  /** Where, for logs and the operator's metrics (never the key). */
  readonly label: string;
  readonly origin: string;
  /** Texts that must not appear in anything relayed from this upstream. */
  private readonly secrets: string[];

  constructor(
    /** lmgate's id of the model this deployment serves. */
    readonly modelId: string,
    /** Position in the model's deployments, a stable name for metrics. */
    readonly index: number,
    readonly config: UpstreamDeployment,
    readonly pool: Pool,
    provider: ProviderWire,
    now?: () => number,
  ) {
    const url = new URL(config.url);
    const base = url.pathname.replace(/\/+$/, '');
    this.path = `${base}${provider.chatPath}`;
    this.embeddingsPath = `${base}/embeddings`;
    this.completionsPath = `${base}/completions`;
    this.countTokensPath = `${base}/messages/count_tokens`;
    this.responsesPath = `${base}/responses`;
    this.origin = url.origin;
    const auth = provider.authHeaders(config.apiKey, config.anthropicVersion);
    this.jsonHeaders = { 'content-type': 'application/json', accept: 'application/json', ...auth };
    this.streamHeaders = { 'content-type': 'application/json', accept: 'text/event-stream', ...auth };
    this.label = `${url.origin}${this.path} (${config.model})`;
    this.secrets = [config.apiKey, url.origin, url.host, url.hostname].filter(
      (secret): secret is string => typeof secret === 'string' && secret.length > 0,
    );
    this.breaker = new CircuitBreaker({ ...config.circuitBreaker, now });
  }

  /** Weight / (1 + in flight); 0 when it takes nothing now (weight 0, full, cooling down). */
  score(): number {
    if (this.config.weight <= 0 || this.inFlight >= this.config.maxConcurrent || !this.breaker.allows()) return 0;
    return this.config.weight / (1 + this.inFlight);
  }

  /** An upstream's own words with its address and our key blanked out. */
  redact(text: string): string {
    let clean = text.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${text.slice(0, MAX_UPSTREAM_MESSAGE_CHARS)}…` : text;
    for (const secret of this.secrets) clean = clean.split(secret).join(REDACTED);
    return clean;
  }
}
