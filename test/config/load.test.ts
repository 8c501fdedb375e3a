// Defaults ← lmgate.yaml (or LMGATE_CONFIG) ← environment, parsed once into a frozen Config.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import type { UpstreamModelConfig } from '../../src/config/schema.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmgate-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const path = join(dir, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** The ConfigError that loading throws (fails the test if it does not throw one). */
function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError, but the configuration loaded');
}

describe('loadConfig defaults', () => {
  it('needs no file and no environment', () => {
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 8080,
      trust_proxy: false,
      allow_plain_http: false,
      body_limit_mb: 4,
      drain_seconds: 25,
      workers: 1,
    });
    expect(config.store).toEqual({ data_dir: './data' });
    expect(config.redis).toEqual({ lease_seconds: 30 });
    expect(config.log.level).toBe('info');
    expect(config.signup.open).toBe(true);
    expect(config.demo).toEqual({ seed_account: true, email: 'demo@lmgate.local', credits: 10 });
    expect(config.default_tier).toBe('free');
    expect(Object.keys(config.tiers)).toEqual(['free', 'pro']);
    expect(config.tiers.free).toMatchObject({ models: ['demo-*'], subscription: false });
    expect(config.tiers.pro).toMatchObject({ models: ['*'], subscription: true });
    expect(Object.keys(config.models)).toEqual(['demo-echo', 'demo-lorem', 'demo-embed']);
  });

  it('fills the defaults of a section the file names only in part', () => {
    write('lmgate.yaml', 'server:\n  port: 9000\nstore:\n  data_dir: /var/lib/lmgate\n');
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.server).toMatchObject({ host: '127.0.0.1', port: 9000, body_limit_mb: 4 });
    expect(config.store).toEqual({ data_dir: '/var/lib/lmgate' });
    expect(config.log.level).toBe('info');
  });
});

describe('loadConfig files', () => {
  it('reads lmgate.yaml from the working directory', () => {
    write(
      'lmgate.yaml',
      [
        'server: { host: 0.0.0.0, port: 9090, allow_plain_http: true }',
        'default_tier: team',
        'tiers:',
        '  team: { rpm: 100, tpm: 50000, concurrency: 8, models: ["*"] }',
        'models:',
        '  demo-fast: { backend: demo, kind: echo, price: { input: 0.5, output: 1.5 } }',
      ].join('\n'),
    );
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.server.host).toBe('0.0.0.0');
    expect(config.server.port).toBe(9090);
    expect(config.server.allow_plain_http).toBe(true);
    expect(config.default_tier).toBe('team');
    expect(Object.keys(config.tiers)).toEqual(['team']);
    expect(config.tiers.team).toEqual({ rpm: 100, tpm: 50000, concurrency: 8, models: ['*'], subscription: false, price_month: 0, credits_month: 0, price_multiplier: 1 });
    expect(config.models['demo-fast']).toMatchObject({ kind: 'echo', price: { input: 0.5, output: 1.5 }, tokens_per_sec: 80 });
  });

  it('reads the file named by LMGATE_CONFIG instead of the one in the working directory', () => {
    write('lmgate.yaml', 'server:\n  port: 1111\n');
    const named = write('etc/elsewhere.yaml', 'server:\n  port: 2222\nsignup:\n  open: false\n');
    const absolute = loadConfig({ env: { LMGATE_CONFIG: named }, cwd: dir });
    expect(absolute.server.port).toBe(2222);
    expect(absolute.signup.open).toBe(false);

    // A relative name is taken from the working directory.
    const relative = loadConfig({ env: { LMGATE_CONFIG: 'etc/elsewhere.yaml' }, cwd: dir });
    expect(relative.server.port).toBe(2222);
  });

  it('fails naming LMGATE_CONFIG when the file it names does not exist', () => {
    const error = configError(() => loadConfig({ env: { LMGATE_CONFIG: join(dir, 'missing.yaml') }, cwd: dir }));
    expect(error.message).toContain('LMGATE_CONFIG');
    expect(error.message).toContain('missing.yaml');
  });

  it('fails naming the file when it is not valid YAML', () => {
    const path = write('lmgate.yaml', 'server: { port: 80\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.message).toContain(path);
  });

  it('treats an empty file as no settings', () => {
    write('lmgate.yaml', '');
    expect(loadConfig({ env: {}, cwd: dir }).server.port).toBe(8080);
  });
});

describe('loadConfig environment overrides', () => {
  it('lets LMGATE_PORT and LMGATE_HOST beat the file', () => {
    write('lmgate.yaml', 'server:\n  host: 10.0.0.1\n  port: 9090\n  body_limit_mb: 8\n');
    const config = loadConfig({ env: { LMGATE_PORT: '7070', LMGATE_HOST: '127.0.0.2' }, cwd: dir });
    expect(config.server.port).toBe(7070);
    expect(config.server.host).toBe('127.0.0.2');
    expect(config.server.body_limit_mb).toBe(8);
  });

  it('lets DATABASE_URL beat the file', () => {
    write('lmgate.yaml', 'store:\n  database_url: postgres://file@db/lmgate\n');
    expect(loadConfig({ env: {}, cwd: dir }).store.database_url).toBe('postgres://file@db/lmgate');
    const config = loadConfig({ env: { DATABASE_URL: 'postgres://env@db/lmgate' }, cwd: dir });
    expect(config.store.database_url).toBe('postgres://env@db/lmgate');
  });

  it('reads DATABASE_URL from the file named by DATABASE_URL_FILE, trimmed', () => {
    write('lmgate.yaml', 'store:\n  database_url: postgres://file@db/lmgate\n');
    const secret = write('secrets/database-url', 'postgres://secret@db/lmgate\n');
    expect(loadConfig({ env: { DATABASE_URL_FILE: secret }, cwd: dir }).store.database_url).toBe('postgres://secret@db/lmgate');
  });

  it('prefers DATABASE_URL over DATABASE_URL_FILE', () => {
    const secret = write('secrets/database-url', 'postgres://secret@db/lmgate\n');
    const config = loadConfig({ env: { DATABASE_URL: 'postgres://env@db/lmgate', DATABASE_URL_FILE: secret }, cwd: dir });
    expect(config.store.database_url).toBe('postgres://env@db/lmgate');
  });

  it('fails naming DATABASE_URL_FILE when its file cannot be read', () => {
    const error = configError(() => loadConfig({ env: { DATABASE_URL_FILE: join(dir, 'nope') }, cwd: dir }));
    expect(error.message).toContain('DATABASE_URL_FILE');
  });

  it('reads booleans and the data directory from the environment', () => {
    const config = loadConfig({ env: { LMGATE_SIGNUP_OPEN: 'false', LMGATE_DEMO_ACCOUNT: 'no', LMGATE_DATA_DIR: '/srv/lmgate' }, cwd: dir });
    expect(config.signup.open).toBe(false);
    expect(config.demo.seed_account).toBe(false);
    expect(config.store.data_dir).toBe('/srv/lmgate');
  });

  it('ignores an empty variable', () => {
    write('lmgate.yaml', 'server:\n  port: 9090\n');
    expect(loadConfig({ env: { LMGATE_PORT: '' }, cwd: dir }).server.port).toBe(9090);
  });
});

describe('loadConfig errors', () => {
  it('names server.port when the file gives an out-of-range port', () => {
    write('lmgate.yaml', 'server:\n  port: 70000\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^server\.port: /);
    expect(error.message).toContain('server.port');
  });

  it('names tiers.free.rpm when a tier limit is not a positive integer', () => {
    write('lmgate.yaml', 'tiers:\n  free: { rpm: 0, tpm: 1000, concurrency: 1, models: ["*"] }\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.problems.some((p) => p.startsWith('tiers.free.rpm: '))).toBe(true);
    expect(error.message).toContain('tiers.free.rpm');
  });

  it('names a model’s endpoints when a demo model cannot serve one of them; an upstream may serve any', () => {
    write('lmgate.yaml', 'models:\n  e: { backend: demo, kind: echo, endpoints: [chat, embeddings] }\n  v: { backend: demo, kind: embedding, endpoints: [responses] }\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/^models\.e\.endpoints: a demo echo model cannot serve embeddings/), expect.stringMatching(/^models\.v\.endpoints: a demo embedding model cannot serve responses/)]),
    );
    write('lmgate.yaml', 'models:\n  u: { endpoints: [embeddings, chat], deployments: [{ url: "http://127.0.0.1:9/v1", model: m }] }\n');
    expect(loadConfig({ env: {}, cwd: dir }).models.u!.endpoints).toEqual(['embeddings', 'chat']);
  });

  it('takes responses: native on OpenAI deployments; names the deployment of kind anthropic that sets it or serves embeddings, a model whose deployments disagree, and an unknown value', () => {
    const url = 'http://127.0.0.1:9/v1';
    write('lmgate.yaml', `models:\n  n: { deployments: [{ url: "${url}", model: m, responses: native }, { url: "${url}", model: m2, responses: native }] }\n  c: { deployments: [{ url: "${url}", model: m }] }\n`);
    const config = loadConfig({ env: {}, cwd: dir });
    expect((config.models.n as UpstreamModelConfig).deployments.map((d) => d.responses)).toEqual(['native', 'native']);
    expect((config.models.c as UpstreamModelConfig).deployments[0]!.responses).toBe('chat');

    write(
      'lmgate.yaml',
      `models:\n  a: { deployments: [{ kind: anthropic, url: "${url}", model: claude, responses: native }] }\n  mixed: { deployments: [{ url: "${url}", model: m, responses: native }, { url: "${url}", model: m }] }\n  typo: { deployments: [{ url: "${url}", model: m, responses: nativ }] }\n  vectors: { endpoints: [embeddings], deployments: [{ url: "${url}", model: e }, { kind: anthropic, url: "${url}", model: claude }] }\n`,
    );
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.problems).toEqual(
      expect.arrayContaining([
        "models.a.deployments.0.responses: native needs a deployment of kind openai: Anthropic's API has no /responses",
        "models.vectors.deployments.1.kind: anthropic cannot serve embeddings: Anthropic's API has no /embeddings",
        'models.mixed.deployments: set responses: native on every deployment of the model or on none: /v1/responses is passed through or translated to chat for the whole model',
        expect.stringMatching(/^models\.typo\.deployments\.0\.responses: .*"chat".*"native"/),
      ]),
    );
  });

  it('takes completions: native only on every OpenAI deployment of a model', () => {
    const url = 'http://127.0.0.1:9/v1';
    write('lmgate.yaml', `models:\n  n: { deployments: [{ url: "${url}", model: m, completions: native, count_tokens: native }] }\n`);
    const deployment = (loadConfig({ env: {}, cwd: dir }).models.n as UpstreamModelConfig).deployments[0]!;
    expect([deployment.completions, deployment.count_tokens]).toEqual(['native', 'native']);
    write(
      'lmgate.yaml',
      `models:\n  a: { deployments: [{ kind: anthropic, url: "${url}", model: claude, completions: native }] }\n  mixed: { deployments: [{ url: "${url}", model: m, completions: native }, { url: "${url}", model: m }] }\n`,
    );
    expect(configError(() => loadConfig({ env: {}, cwd: dir })).problems).toEqual(
      expect.arrayContaining([
        "models.a.deployments.0.completions: native needs a deployment of kind openai: Anthropic's API has no /completions",
        'models.mixed.deployments: set completions: native on every deployment of the model or on none: /v1/completions is passed through or translated to chat for the whole model',
      ]),
    );
  });

  it('fills a price’s other kinds from input and output, and takes a tier’s multiplier with at most 6 decimals', () => {
    write('lmgate.yaml', 'tiers:\n  t: { rpm: 1, tpm: 1, concurrency: 1, models: ["*"], price_multiplier: 1.25 }\ndefault_tier: t\nmodels:\n  m: { backend: demo, kind: echo, price: { input: 2, output: 8, cache_write: 2.5 } }\n');
    const config = loadConfig({ env: {}, cwd: dir });
    expect(config.models.m!.price).toEqual({ input: 2, cached_input: 2, cache_write: 2.5, cache_write_1h: 2.5, output: 8, reasoning: 8 });
    expect(config.tiers.t!.price_multiplier).toBe(1.25);
    write('lmgate.yaml', 'tiers:\n  t: { rpm: 1, tpm: 1, concurrency: 1, models: ["*"], price_multiplier: 1.0000001 }\ndefault_tier: t\n');
    expect(configError(() => loadConfig({ env: {}, cwd: dir })).problems).toEqual([expect.stringMatching(/^tiers\.t\.price_multiplier: at most 6 decimal places/)]);
  });

  it('names an unknown key and where it is', () => {
    write('lmgate.yaml', 'server:\n  prot: 8080\n');
    const nested = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(nested.message).toMatch(/server\b.*prot/);

    write('lmgate.yaml', 'sever:\n  port: 8080\n');
    const topLevel = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(topLevel.message).toContain('sever');
  });

  it('reports every problem at once', () => {
    write('lmgate.yaml', 'server:\n  port: -1\n  host: ""\nlog:\n  level: loud\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    const paths = error.problems.map((p) => p.split(':')[0]);
    expect(paths).toEqual(expect.arrayContaining(['server.port', 'server.host', 'log.level']));
  });

  it('takes the drain time and workers from the environment; more than one worker needs Redis', () => {
    const config = loadConfig({ env: { LMGATE_DRAIN_SECONDS: '2.5', LMGATE_WORKERS: '3', REDIS_URL: 'redis://r', DATABASE_URL: 'postgres://p/db' }, cwd: dir });
    expect(config.server).toMatchObject({ drain_seconds: 2.5, workers: 3 });
    expect(configError(() => loadConfig({ env: { LMGATE_WORKERS: '2' }, cwd: dir })).message).toMatch(/server\.workers: more than one worker needs shared mode/);
  });

  it('names default_tier when it names no configured tier', () => {
    write('lmgate.yaml', 'default_tier: gold\n');
    const error = configError(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.message).toContain('default_tier');
  });

  it('names the variable when an environment value does not parse', () => {
    expect(configError(() => loadConfig({ env: { LMGATE_PORT: 'eighty' }, cwd: dir })).message).toContain('LMGATE_PORT');
    expect(configError(() => loadConfig({ env: { LMGATE_PORT: '80.5' }, cwd: dir })).message).toContain('LMGATE_PORT');
    expect(configError(() => loadConfig({ env: { LMGATE_SIGNUP_OPEN: 'maybe' }, cwd: dir })).message).toContain('LMGATE_SIGNUP_OPEN');
    expect(configError(() => loadConfig({ env: { LMGATE_BODY_LIMIT_MB: 'lots' }, cwd: dir })).message).toContain('LMGATE_BODY_LIMIT_MB');
  });

  it('names the variable when an environment value parses but breaks a rule', () => {
    const port = configError(() => loadConfig({ env: { LMGATE_PORT: '70000' }, cwd: dir }));
    expect(port.message).toContain('server.port');
    expect(port.message).toContain('LMGATE_PORT');

    const level = configError(() => loadConfig({ env: { LMGATE_LOG_LEVEL: 'loud' }, cwd: dir }));
    expect(level.message).toContain('LMGATE_LOG_LEVEL');

    const tier = configError(() => loadConfig({ env: { LMGATE_DEFAULT_TIER: 'gold' }, cwd: dir }));
    expect(tier.message).toContain('LMGATE_DEFAULT_TIER');
  });

  it('does not blame a variable for a problem that is in the file', () => {
    write('lmgate.yaml', 'server:\n  port: 70000\n');
    const error = configError(() => loadConfig({ env: { LMGATE_HOST: '127.0.0.1' }, cwd: dir }));
    expect(error.message).toContain('server.port');
    expect(error.message).not.toContain('LMGATE_');
  });
});

describe('the loaded config', () => {
  it('is frozen all the way down', () => {
    const config = loadConfig({ env: {}, cwd: dir });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.server)).toBe(true);
    expect(Object.isFrozen(config.tiers)).toBe(true);
    expect(Object.isFrozen(config.tiers.free)).toBe(true);
    expect(Object.isFrozen(config.tiers.free!.models)).toBe(true);
    expect(Object.isFrozen(config.models['demo-lorem']!.price)).toBe(true);
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(() => {
      (config.tiers.free!.models as string[]).push('*');
    }).toThrow(TypeError);
    expect(config.server.port).toBe(8080);
  });
});

describe('shared mode (Redis)', () => {
  it('is off without REDIS_URL, and REDIS_URL with DATABASE_URL turns it on', () => {
    expect(loadConfig({ env: {}, cwd: dir }).redis.url).toBeUndefined();
    const config = loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://localhost/x' }, cwd: dir });
    expect(config.redis.url).toBe('redis://127.0.0.1:6379');
  });

  it('is refused on SQLite, saying why and what to set', () => {
    const error = configError(() => loadConfig({ env: { REDIS_URL: 'redis://127.0.0.1:6379' }, cwd: dir }));
    expect(error.message).toContain('redis.url');
    expect(error.message).toContain('needs PostgreSQL');
    expect(error.message).toContain('DATABASE_URL');
  });
});
