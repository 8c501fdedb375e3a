// The models lmgate offers, built once from config: id → backend, limits and prices.
import { ConfigError, readSecretEnv } from '../config/load.js';
import type { Config, ModelConfig, ModelEndpoint, UpstreamModelConfig } from '../config/schema.js';
import { creditsToMicros } from '../money.js';
import { PromptCalibrations } from '../billing/prompt-calibration.js';
import { holdPrices, type Prices } from '../billing/pricing.js';
import { ModelNotFoundError, ValidationError } from '../errors.js';
import type { ChatBackend, EmbeddingBackend, ResponsesBackend, TextCompletionBackend } from './backend.js';
import { createDemoBackend } from './demo-backend.js';
import { createDemoEmbedder } from './demo-embedder.js';
import type { ModelObject } from './model-object.js';
import { createOpenAICompatibleBackend, type OpenAICompatibleBackend } from './openai-compatible-backend.js';
import type { Metrics } from '../observability/metrics.js';

/** Looks up a secret by the environment variable a config entry names (`*_env`). */
export type SecretReader = (name: string) => string | undefined;

/** A model's prices per token kind (micro-credits per million tokens) are its own fields. */
export interface ModelEntry extends Prices {
  id: string;
  ownedBy: string;
  description: string | undefined;
  contextTokens: number;
  maxOutputTokens: number;
  /** The prices a hold is made at (metering.ts). */
  holdPrices: Prices;
  /** What the model's servers count in a prompt, learned per shape of prompt (prompt-calibration.ts). */
  calibrations: PromptCalibrations;
  /** The endpoints it may be called on. */
  endpoints: readonly ModelEndpoint[];
  /** Answers chat, and the endpoints translated to chat; none on a demo embedding model. */
  backend: ChatBackend | undefined;
  /** Answers embeddings: a demo embedding model's, or the upstreams'. */
  embedder: EmbeddingBackend | undefined;
  /** Answers /v1/responses as it is, when every deployment speaks it (`responses: native`); else it is translated to chat. */
  responder: ResponsesBackend | undefined;
  /** Answers /v1/completions as it is, when every deployment has its own (`completions: native`); else it is translated to chat. */
  completer: TextCompletionBackend | undefined;
  /** Counts a Messages request's input on an upstream, when a deployment says `count_tokens: native`; undefined: estimate. */
  countTokens: ((request: Record<string, unknown>) => Promise<number | undefined>) | undefined;
  /** The OpenAI model object plus price and context, built once. */
  json: ModelObject;
}

/** What a chat model serves unless its config says otherwise. */
const CHAT_MODEL_ENDPOINTS: readonly ModelEndpoint[] = ['chat', 'responses', 'completions'];

/** The path each endpoint is served on, for messages that point to it. */
const ENDPOINT_PATHS: Record<ModelEndpoint, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
};

// OpenAI's `created` is when the model was published; a fixed date keeps responses stable.
const CATALOG_CREATED_UNIX_SEC = 1_767_225_600; // 2026-01-01T00:00:00Z

export class ModelCatalog {
  private readonly models = new Map<string, ModelEntry>();

  constructor(config: Config, options: { readSecret?: SecretReader; metrics?: Metrics } = {}) {
    const { readSecret = readSecretEnv, metrics } = options;
    for (const [id, model] of Object.entries(config.models)) {
      const prices: Prices = {
        inputPerMTokMicros: creditsToMicros(model.price.input),
        cachedInputPerMTokMicros: creditsToMicros(model.price.cached_input),
        cacheWritePerMTokMicros: creditsToMicros(model.price.cache_write),
        cacheWrite1hPerMTokMicros: creditsToMicros(model.price.cache_write_1h),
        outputPerMTokMicros: creditsToMicros(model.price.output),
        reasoningPerMTokMicros: creditsToMicros(model.price.reasoning),
      };
      const entry: Omit<ModelEntry, 'json'> = {
        id,
        ownedBy: model.owned_by,
        description: model.description,
        contextTokens: model.context,
        maxOutputTokens: model.max_output,
        ...prices,
        holdPrices: holdPrices(prices),
        // A demo model counts its prompt with lmgate's own tokenizer: its report is the count.
        calibrations: new PromptCalibrations(model.backend === 'demo'),
        endpoints: model.endpoints ?? (model.backend === 'demo' && model.kind === 'embedding' ? ['embeddings'] : CHAT_MODEL_ENDPOINTS),
        ...backendsFor(id, model, readSecret, metrics),
      };
      this.models.set(id, { ...entry, json: toModelObject(entry, model.price) });
    }
  }

  /**
   * Step 5 of the request path: the model, or 404; called for an endpoint, a model that
   * does not serve it is an invalid `model` for the request (422, naming what it serves).
   */
  resolve(id: string, endpoint?: ModelEndpoint): ModelEntry {
    const model = this.models.get(id);
    if (!model) throw new ModelNotFoundError(id);
    if (endpoint !== undefined && !model.endpoints.includes(endpoint)) {
      const served = model.endpoints.map((each) => ENDPOINT_PATHS[each]).join(', ');
      throw new ValidationError({ model: [`${id} is not served on ${ENDPOINT_PATHS[endpoint]}; it serves ${served}`] });
    }
    return model;
  }

  list(): ModelEntry[] {
    return [...this.models.values()];
  }

  /** Every model's id, in the catalogue's order. */
  get ids(): string[] {
    return [...this.models.keys()];
  }

  async close(): Promise<void> {
    await Promise.all(this.list().map((model) => model.backend?.close?.()));
  }
}

/** The chat backend of a model that serves chat, responses or completions (resolve checked that). */
export function chatBackendOf(model: ModelEntry): ChatBackend {
  if (model.backend === undefined) throw new Error(`model ${model.id} has no chat backend`);
  return model.backend;
}

/** The embedding backend of a model that serves embeddings (resolve checked that). */
export function embedderOf(model: ModelEntry): EmbeddingBackend {
  if (model.embedder === undefined) throw new Error(`model ${model.id} has no embedding backend`);
  return model.embedder;
}

type Backends = Pick<ModelEntry, 'backend' | 'embedder' | 'responder' | 'completer' | 'countTokens'>;

function backendsFor(id: string, model: ModelConfig, readSecret: SecretReader, metrics: Metrics | undefined): Backends {
  if (model.backend !== 'demo') {
    const upstream = upstreamBackendFor(id, model, readSecret, metrics);
    // The config has every deployment of a model agree (schema.ts).
    const speaksResponses = model.deployments.every((deployment) => deployment.responses === 'native');
    const completesText = model.deployments.every((deployment) => deployment.completions === 'native');
    const countsTokens = upstream.deployments.some((deployment) => deployment.config.countTokens === 'native');
    return {
      backend: upstream,
      embedder: upstream,
      responder: speaksResponses ? upstream : undefined,
      completer: completesText ? upstream : undefined,
      countTokens: countsTokens ? upstream.countTokens : undefined,
    };
  }
  const none = { responder: undefined, completer: undefined, countTokens: undefined };
  if (model.kind === 'embedding') return { backend: undefined, embedder: createDemoEmbedder({ dimensions: model.dimensions }), ...none };
  const backend = createDemoBackend({ kind: model.kind, tokensPerSec: model.tokens_per_sec, defaultTokens: model.default_tokens });
  return { backend, embedder: undefined, ...none };
}

function upstreamBackendFor(id: string, model: UpstreamModelConfig, readSecret: SecretReader, metrics: Metrics | undefined): OpenAICompatibleBackend {
  const backend = createOpenAICompatibleBackend({
    modelId: id,
    observer: metrics,
    deployments: model.deployments.map((deployment, index) => {
      let apiKey: string | undefined;
      if (deployment.api_key_env) {
        apiKey = readSecret(deployment.api_key_env);
        if (!apiKey) {
          throw new ConfigError([`models.${id}.deployments.${index}.api_key_env: ${deployment.api_key_env} is not set`]);
        }
      }
      return {
        kind: deployment.kind,
        anthropicVersion: deployment.anthropic_version,
        url: deployment.url.replace(/\/+$/, ''),
        model: deployment.model,
        apiKey,
        weight: deployment.weight,
        maxConcurrent: deployment.max_concurrent,
        countTokens: deployment.count_tokens ?? (deployment.kind === 'anthropic' ? 'native' : 'estimate'),
        timeouts: {
          connectMs: deployment.timeouts.connect_ms,
          firstByteMs: deployment.timeouts.first_byte_ms,
          idleMs: deployment.timeouts.idle_ms,
          totalMs: deployment.timeouts.total_ms,
        },
        circuitBreaker: {
          failureThreshold: deployment.circuit_breaker.failures,
          cooldownMs: deployment.circuit_breaker.cooldown_ms,
          maxCooldownMs: deployment.circuit_breaker.max_cooldown_ms,
        },
      };
    }),
  });
  metrics?.watch(backend.deployments);
  return backend;
}

function toModelObject(entry: Omit<ModelEntry, 'json'>, price: ModelConfig['price']): ModelObject {
  return {
    id: entry.id,
    object: 'model',
    created: CATALOG_CREATED_UNIX_SEC,
    owned_by: entry.ownedBy,
    context_length: entry.contextTokens,
    max_output_tokens: entry.maxOutputTokens,
    pricing: {
      input: price.input,
      cached_input: price.cached_input,
      cache_write: price.cache_write,
      cache_write_1h: price.cache_write_1h,
      output: price.output,
      reasoning: price.reasoning,
      unit: 'credits per 1M tokens',
    },
    endpoints: [...entry.endpoints],
    ...(entry.description ? { description: entry.description } : {}),
  };
}
