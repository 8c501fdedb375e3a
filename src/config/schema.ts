// Every setting lmgate reads, its default and its unit. The YAML/JSON file and the
// LMGATE_* environment variables (config/load.ts) are parsed against this one schema.
import { z } from 'zod';
import { authSchema } from './auth-schema.js';
import { smtp, stripePayments } from './service-schemas.js';

/** The Messages API version lmgate speaks to a deployment of kind anthropic, sent as `anthropic-version` unless configured otherwise. */
export const ANTHROPIC_VERSION = '2023-06-01';

// Credits per million tokens of each kind. A cached input token and a cache write cost
// the input price unless set; a reasoning token costs the output price unless set.
const price = z
  .object({
    input: z.number().nonnegative().default(0),
    cached_input: z.number().nonnegative().optional(), // input read from the provider's prompt cache
    cache_write: z.number().nonnegative().optional(), // input written to the cache (5 minutes, or unstated)
    cache_write_1h: z.number().nonnegative().optional(), // input written to the cache for an hour
    output: z.number().nonnegative().default(0),
    reasoning: z.number().nonnegative().optional(), // output spent reasoning
  })
  .strict()
  .transform((p) => ({
    input: p.input,
    cached_input: p.cached_input ?? p.input,
    cache_write: p.cache_write ?? p.input,
    cache_write_1h: p.cache_write_1h ?? p.cache_write ?? p.input,
    output: p.output,
    reasoning: p.reasoning ?? p.output,
  }));

/** The tiers without a `tiers:` in the config. */
export const DEFAULT_TIERS = {
  free: { rpm: 60, tpm: 100_000, concurrency: 4, models: ['demo-*'], subscription: false, price_month: 0, credits_month: 0 },
  pro: { rpm: 600, tpm: 2_000_000, concurrency: 32, models: ['*'], subscription: true, price_month: 20, credits_month: 25 },
};

/** A price multiplier: 1 is the configured price, 1.2 a 20 % markup, 0.5 half price; kept as integer parts per million. */
export const priceMultiplier = z
  .number()
  .positive()
  .max(1_000)
  .refine((value) => Number.isInteger(Math.round(value * 1e6)) && Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6, 'at most 6 decimal places');

/** The API endpoints a model can serve; a model is called only on those it lists. */
export const MODEL_ENDPOINTS = ['chat', 'responses', 'completions', 'embeddings'] as const;
export type ModelEndpoint = (typeof MODEL_ENDPOINTS)[number];

/** What every model in the catalogue has, whatever serves it. */
const catalogFields = {
  // Default: every endpoint a chat model answers (chat, and responses and completions
  // translated to chat); a demo embedding model's default is embeddings.
  endpoints: z.array(z.enum(MODEL_ENDPOINTS)).min(1).optional(),
  context: z.number().int().positive().default(128_000), // context length, tokens
  max_output: z.number().int().positive().default(16_384), // output tokens at most
  // Absent: free, and `serve` warns at start; `price: 0` makes a free model deliberate.
  price: z.preprocess((value) => (value === 0 ? {} : value), price).prefault({}),
  owned_by: z.string().default('lmgate'),
  description: z.string().optional(),
};

const demoModel = z
  .object({
    backend: z.literal('demo'),
    kind: z.enum(['echo', 'lorem', 'embedding']),
    tokens_per_sec: z.number().nonnegative().default(80),
    default_tokens: z.number().int().positive().default(200),
    dimensions: z.number().int().positive().max(8_192).default(256), // embedding: vector length
    ...catalogFields,
  })
  .strict();

const deployment = z
  .object({
    // The API the upstream speaks: OpenAI's chat completions, or Anthropic's Messages API
    // (POST /messages with x-api-key and anthropic-version).
    kind: z.enum(['openai', 'anthropic']).default('openai'),
    url: z.string().url(), // the upstream's base URL, ending in /v1
    model: z.string().min(1), // the upstream's name for the model
    api_key_env: z.string().min(1).optional(), // environment variable holding its API key
    anthropic_version: z.string().min(1).default(ANTHROPIC_VERSION), // kind anthropic: the anthropic-version header
    // How /v1/responses reaches it: translated to its /chat/completions (chat), or passed
    // to its own /responses (native), for servers that speak OpenAI's Responses API.
    responses: z.enum(['chat', 'native']).default('chat'),
    // How /v1/completions reaches it: translated to chat (the prompt as one user message,
    // inside the model's chat template), or passed to its own /completions (native), for
    // servers that have one (llama.cpp, vLLM, Ollama): the prompt as it is.
    completions: z.enum(['chat', 'native']).default('chat'),
    // How /v1/messages/count_tokens counts for it: lmgate's estimate (its count, corrected by
    // what the server reports), or the upstream's own /messages/count_tokens (native), which
    // Anthropic's API and llama.cpp's server answer. Default: native for kind anthropic.
    count_tokens: z.enum(['estimate', 'native']).optional(),
    weight: z.number().positive().default(1),
    max_concurrent: z.number().int().positive().default(64),
    timeouts: z
      .object({
        connect_ms: z.number().int().positive().default(5_000),
        first_byte_ms: z.number().int().positive().default(60_000),
        idle_ms: z.number().int().positive().default(30_000), // between streamed chunks
        total_ms: z.number().int().positive().default(600_000),
      })
      .strict()
      .prefault({}),
    // Failures in a row take a deployment out of rotation for a cooldown; then one request
    // probes it. Each failed probe doubles the cooldown, up to max_cooldown_ms.
    circuit_breaker: z
      .object({
        failures: z.number().int().positive().default(3),
        cooldown_ms: z.number().int().positive().default(5_000),
        max_cooldown_ms: z.number().int().positive().default(60_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();

/** A model served by upstreams: OpenAI-compatible ones (vLLM, Ollama, llama.cpp, OpenAI...) or Anthropic's API. */
const upstreamModel = z
  .object({
    backend: z.literal('openai').default('openai'),
    deployments: z.array(deployment).min(1),
    ...catalogFields,
  })
  .strict();

const tier = z
  .object({
    rpm: z.number().int().positive(), // requests per minute
    tpm: z.number().int().positive(), // tokens per minute (prompt + max output, reserved)
    concurrency: z.number().int().positive(),
    models: z.array(z.string().min(1)).min(1), // glob patterns: "demo-*", "*"
    subscription: z.boolean().default(false), // requires an active subscription
    price_month: z.number().nonnegative().default(0),
    credits_month: z.number().nonnegative().default(0),
    price_multiplier: priceMultiplier.default(1), // every model's prices × this for the tier's accounts
    description: z.string().optional(),
  })
  .strict();

const tls = z
  .object({
    cert: z.string().min(1), // path to a PEM certificate (chain)
    key: z.string().min(1), // path to its PEM private key
  })
  .strict();

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: z.number().int().min(0).max(65_535).default(8080),
        api_host: z.string().min(1).optional(), // dedicated API hostname serving /v1
        trust_proxy: z.union([z.boolean(), z.string(), z.array(z.string())]).default(false),
        allow_plain_http: z.boolean().default(false), // plain HTTP beyond loopback, knowingly
        tls: tls.optional(),
        body_limit_mb: z.number().positive().max(1024).default(4),
        public_url: z.string().url().optional(), // how clients reach lmgate (shown in docs)
        // On SIGTERM, running answers get this long to finish before they are ended.
        drain_seconds: z.number().min(0).max(3_600).default(25),
        // Processes on this machine sharing the port (`serve --workers N`); more than one
        // needs shared mode, through which instances agree on credits and limits.
        workers: z.number().int().min(1).max(256).default(1),
      })
      .strict()
      .prefault({}),
    store: z
      .object({
        data_dir: z.string().min(1).default('./data'),
        sqlite_path: z.string().min(1).optional(), // default: <data_dir>/lmgate.db
        database_url: z.string().min(1).optional(), // postgres://... (usually DATABASE_URL)
      })
      .strict()
      .prefault({}),
    // Shared mode: several instances on one PostgreSQL keep credits, limits and leases in
    // Redis (usually REDIS_URL). Unset: one process keeps them in memory.
    redis: z
      .object({
        url: z.string().min(1).optional(), // redis://[user:password@]host:port[/db]
        // On every key and channel, so several deployments can share one Redis (a database
        // number does not separate pub/sub channels). Default: lmgate:<hash of the database
        // URL without user and password> (shared/deployment-prefix.ts).
        key_prefix: z.string().min(1).optional(),
        // A reservation or concurrency slot of an instance that died lasts this long.
        lease_seconds: z.number().min(1).max(600).default(30),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
    // Prometheus metrics at /metrics: for loopback clients only, or for anyone presenting
    // `Authorization: Bearer <token>` when token_env names a variable holding the token.
    metrics: z
      .object({
        enabled: z.boolean().default(true),
        token_env: z.string().min(1).optional(),
      })
      .strict()
      .prefault({}),
    request_log: z
      .object({
        retention_days: z.number().int().positive().default(30), // refused requests kept this long
      })
      .strict()
      .prefault({}),
    usage: z
      .object({
        // Raw usage records kept this long; absent: for ever. Daily rollups and the ledger are always kept.
        retention_days: z.number().int().positive().optional(),
      })
      .strict()
      .prefault({}),
    signup: z
      .object({
        open: z.boolean().default(true),
        // A trial balance granted to each account at sign-up: enough for a first few
        // hundred calls to the demo models, so a new account works before any top-up.
        credits: z.number().nonnegative().default(1),
        per_address_per_hour: z.number().int().positive().default(10), // sign-ups from one client address
        // The account is created once its owner opens a link mailed to the address (needs
        // smtp): an address nobody confirmed takes no email and gets no credits.
        verify_email: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    auth: authSchema, // OpenID Connect beside passwords (auth-schema.ts)
    demo: z
      .object({
        seed_account: z.boolean().default(true), // create a demo account + key on first start
        email: z.string().default('demo@lmgate.local'),
        credits: z.number().nonnegative().default(10),
      })
      .strict()
      .prefault({}),
    // Without it, no mail goes out: reset links come from `lmgate accounts reset-link`.
    smtp: smtp.optional(),
    // Without payments.stripe, credits come from the operator's codes and grants only.
    payments: z
      .object({ stripe: stripePayments.optional() })
      .strict()
      .prefault({}),
    // Customer webhooks (webhooks/): how long a delivery waits for an answer, and whether
    // endpoints may be on loopback or private addresses (off: an account cannot make lmgate
    // call into the network it runs in).
    webhooks: z
      .object({
        timeout_seconds: z.number().positive().max(60).default(10),
        allow_private_addresses: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    // How customers reach the operator (an email address or a URL), shown wherever the
    // dashboard tells them to: paid plans without payments, closed sign-up, no mail.
    // `support: { email, url }` is the full form; `contact` (either, as one string) its
    // older shorthand. Both unset: the dashboard says "contact the operator" and no more.
    support: z
      .object({ email: z.string().email().optional(), url: z.string().url().optional() })
      .strict()
      .optional(),
    contact: z.string().min(1).max(500).optional(),
    default_tier: z.string().min(1).default('free'),
    // A `tiers:` in the config replaces these whole (`serve` warns of a default one it drops).
    tiers: z.record(z.string().min(1), tier).prefault(DEFAULT_TIERS),
    // The demo models carry small prices so the meter visibly moves: a default lorem answer
    // (200 tokens) costs about 0.0016 credits, and its worst case (16,384 tokens) 0.13.
    // Told apart by `backend`, so that a mistake is reported where it is, not as "Invalid input".
    models: z.record(z.string().min(1).max(200), z.discriminatedUnion('backend', [demoModel, upstreamModel]).superRefine(demoEndpointsFit).superRefine(openAIEndpointsFit)).prefault({
      'demo-echo': { backend: 'demo', kind: 'echo', tokens_per_sec: 0, default_tokens: 200, dimensions: 256, context: 128_000, max_output: 16_384, price: { input: 0.5, output: 1.5 }, owned_by: 'lmgate', description: 'Answers with the last user message.' },
      'demo-lorem': { backend: 'demo', kind: 'lorem', tokens_per_sec: 80, default_tokens: 200, dimensions: 256, context: 128_000, max_output: 16_384, price: { input: 2, output: 8 }, owned_by: 'lmgate', description: 'Writes fluent filler text at a steady token rate.' },
      'demo-embed': { backend: 'demo', kind: 'embedding', tokens_per_sec: 0, default_tokens: 200, dimensions: 256, context: 8_192, max_output: 16_384, price: { input: 0.1, output: 0 }, owned_by: 'lmgate', description: 'Embeds text as deterministic, normalized vectors.' },
    }),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.redis.url && !config.store.database_url) {
      ctx.addIssue({
        code: 'custom',
        path: ['redis', 'url'],
        message:
          'shared mode (Redis) needs PostgreSQL as the store: a SQLite file belongs to one machine, so other instances ' +
          'could not read the accounts and ledger their Redis state refers to. Set DATABASE_URL (store.database_url), ' +
          'or unset REDIS_URL to run one instance on SQLite',
      });
    }
    if (config.server.workers > 1 && !config.redis.url) {
      ctx.addIssue({
        code: 'custom',
        path: ['server', 'workers'],
        message:
          'more than one worker needs shared mode: each worker is an instance, and instances agree on credits and limits ' +
          'only through Redis. Set REDIS_URL (redis.url) and DATABASE_URL, or run one worker',
      });
    }
    const stripe = config.payments.stripe;
    for (const tier of Object.keys(stripe?.prices ?? {})) {
      if (!config.tiers[tier]?.subscription) {
        ctx.addIssue({ code: 'custom', path: ['payments', 'stripe', 'prices', tier], message: 'names no tier with subscription: true' });
      }
    }
    if (stripe && stripe.top_up.min > stripe.top_up.max) {
      ctx.addIssue({ code: 'custom', path: ['payments', 'stripe', 'top_up', 'min'], message: 'is above top_up.max' });
    }
    if (config.smtp?.user && !config.smtp.password_env) {
      ctx.addIssue({ code: 'custom', path: ['smtp', 'password_env'], message: 'names the variable holding the password of smtp.user' });
    }
    if (config.signup.verify_email && !config.smtp) {
      ctx.addIssue({ code: 'custom', path: ['signup', 'verify_email'], message: 'needs smtp: the confirmation link goes out by mail' });
    }
    if (!(config.default_tier in config.tiers)) {
      ctx.addIssue({ code: 'custom', path: ['default_tier'], message: `names no tier in tiers (${Object.keys(config.tiers).join(', ')})` });
    }
  });

/** A demo model serves what it can: vectors for embeddings, text for the rest. */
function demoEndpointsFit(model: z.output<typeof demoModel> | z.output<typeof upstreamModel>, ctx: z.RefinementCtx): void {
  if (model.backend !== 'demo' || model.endpoints === undefined) return;
  const isEmbedding = model.kind === 'embedding';
  for (const endpoint of model.endpoints) {
    if ((endpoint === 'embeddings') !== isEmbedding) {
      ctx.addIssue({ code: 'custom', path: ['endpoints'], message: `a demo ${model.kind} model cannot serve ${endpoint}` });
    }
  }
}

/**
 * OpenAI's own endpoints (/embeddings, and /completions and /responses with `native`) are
 * for deployments of kind openai: Anthropic's API has none of them. A model's
 * /v1/responses (and /v1/completions) is either passed through or translated to chat, so
 * its deployments agree (failover may land on any of them).
 */
function openAIEndpointsFit(model: z.output<typeof demoModel> | z.output<typeof upstreamModel>, ctx: z.RefinementCtx): void {
  if (model.backend === 'demo') return;
  const completions = model.deployments.map((deployment) => deployment.completions === 'native');
  model.deployments.forEach((deployment, index) => {
    if (deployment.kind === 'anthropic' && completions[index]) {
      ctx.addIssue({ code: 'custom', path: ['deployments', index, 'completions'], message: 'native needs a deployment of kind openai: Anthropic\'s API has no /completions' });
    }
  });
  if (completions.includes(true) && completions.includes(false)) {
    ctx.addIssue({
      code: 'custom',
      path: ['deployments'],
      message: 'set completions: native on every deployment of the model or on none: /v1/completions is passed through or translated to chat for the whole model',
    });
  }
  if (model.endpoints?.includes('embeddings')) {
    model.deployments.forEach((deployment, index) => {
      if (deployment.kind === 'anthropic') ctx.addIssue({ code: 'custom', path: ['deployments', index, 'kind'], message: 'anthropic cannot serve embeddings: Anthropic\'s API has no /embeddings' });
    });
  }
  const native = model.deployments.map((deployment) => deployment.responses === 'native');
  model.deployments.forEach((deployment, index) => {
    if (deployment.kind === 'anthropic' && native[index]) {
      ctx.addIssue({ code: 'custom', path: ['deployments', index, 'responses'], message: 'native needs a deployment of kind openai: Anthropic\'s API has no /responses' });
    }
  });
  if (native.includes(true) && native.includes(false)) {
    ctx.addIssue({
      code: 'custom',
      path: ['deployments'],
      message: 'set responses: native on every deployment of the model or on none: /v1/responses is passed through or translated to chat for the whole model',
    });
  }
}

export type Config = z.output<typeof configSchema>;
export type TierConfig = z.output<typeof tier>;
export type StripeConfig = z.output<typeof stripePayments>;
export type SmtpConfig = z.output<typeof smtp>;
export type DemoModelConfig = z.output<typeof demoModel>;
export type UpstreamModelConfig = z.output<typeof upstreamModel>;
export type ModelConfig = DemoModelConfig | UpstreamModelConfig;
