// The models lmgate offers, built once from config: id → backend, limits and prices.
import { ConfigError, readSecretEnv } from '../config/load.js';
import type { Config, ModelConfig } from '../config/schema.js';
import { creditsToMicros } from '../billing/money.js';
import { ModelNotFoundError } from '../errors.js';
import type { ChatBackend } from './backend.js';
import { createDemoBackend } from './demo-backend.js';
import type { ModelObject } from './model-object.js';
import { createOpenAICompatibleBackend } from './openai-compatible-backend.js';
import type { Metrics } from '../observability/metrics.js';

/** Looks up a secret by the environment variable a config entry names (`*_env`). */
export type SecretReader = (name: string) => string | undefined;

export interface ModelEntry {
  id: string;
  ownedBy: string;
  description: string | undefined;
  contextTokens: number;
  maxOutputTokens: number;
  inputPerMTokMicros: number;
  outputPerMTokMicros: number;
  backend: ChatBackend;
  /** The OpenAI model object plus price and context, built once. */
  json: ModelObject;
}

// OpenAI's `created` is when the model was published; a fixed date keeps responses stable.
const CATALOG_CREATED_UNIX_SEC = 1_767_225_600; // 2026-01-01T00:00:00Z

export class ModelCatalog {
  private readonly models = new Map<string, ModelEntry>();

  constructor(config: Config, options: { readSecret?: SecretReader; metrics?: Metrics } = {}) {
    const { readSecret = readSecretEnv, metrics } = options;
    for (const [id, model] of Object.entries(config.models)) {
      const entry: Omit<ModelEntry, 'json'> = {
        id,
        ownedBy: model.owned_by,
        description: model.description,
        contextTokens: model.context,
        maxOutputTokens: model.max_output,
        inputPerMTokMicros: creditsToMicros(model.price.input),
        outputPerMTokMicros: creditsToMicros(model.price.output),
        backend: backendFor(id, model, readSecret, metrics),
      };
      this.models.set(id, { ...entry, json: toModelObject(entry, model.price) });
    }
  }

  /** Step 5 of the request path: the model, or 404. */
  resolve(id: string): ModelEntry {
    const model = this.models.get(id);
    if (!model) throw new ModelNotFoundError(id);
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
    await Promise.all(this.list().map((model) => model.backend.close?.()));
  }
}

function backendFor(id: string, model: ModelConfig, readSecret: SecretReader, metrics: Metrics | undefined): ChatBackend {
  if (model.backend === 'demo') {
    return createDemoBackend({ kind: model.kind, tokensPerSec: model.tokens_per_sec, defaultTokens: model.default_tokens });
  }
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
        url: deployment.url.replace(/\/+$/, ''),
        model: deployment.model,
        apiKey,
        weight: deployment.weight,
        maxConcurrent: deployment.max_concurrent,
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

function toModelObject(entry: Omit<ModelEntry, 'json'>, price: { input: number; output: number }): ModelObject {
  return {
    id: entry.id,
    object: 'model',
    created: CATALOG_CREATED_UNIX_SEC,
    owned_by: entry.ownedBy,
    context_length: entry.contextTokens,
    max_output_tokens: entry.maxOutputTokens,
    pricing: { input: price.input, output: price.output, unit: 'credits per 1M tokens' },
    ...(entry.description ? { description: entry.description } : {}),
  };
}
