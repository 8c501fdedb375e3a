// Defaults ← config file ← environment, parsed once into a frozen Config. The only module
// that reads process.env.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { knownKeysAt, suggestKey } from './key-suggestion.js';
import { configSchema, type Config } from './schema.js';
import { recordWarnings } from './warnings.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type EnvKind = 'string' | 'int' | 'number' | 'bool' | 'list-or-bool';

/** Every environment variable lmgate reads, and the setting it overrides. */
const ENV_OVERRIDES: ReadonlyArray<[variable: string, path: string[], kind: EnvKind]> = [
  ['LMGATE_HOST', ['server', 'host'], 'string'],
  // PORT is what platforms that run Node set; LMGATE_PORT, read after it, wins when both are.
  ['PORT', ['server', 'port'], 'int'],
  ['LMGATE_PORT', ['server', 'port'], 'int'],
  ['LMGATE_API_HOST', ['server', 'api_host'], 'string'],
  ['LMGATE_TRUST_PROXY', ['server', 'trust_proxy'], 'list-or-bool'],
  ['LMGATE_ALLOW_PLAIN_HTTP', ['server', 'allow_plain_http'], 'bool'],
  ['LMGATE_TLS_CERT', ['server', 'tls', 'cert'], 'string'],
  ['LMGATE_TLS_KEY', ['server', 'tls', 'key'], 'string'],
  ['LMGATE_BODY_LIMIT_MB', ['server', 'body_limit_mb'], 'number'],
  ['LMGATE_PUBLIC_URL', ['server', 'public_url'], 'string'],
  ['LMGATE_WORKERS', ['server', 'workers'], 'int'],
  ['LMGATE_DRAIN_SECONDS', ['server', 'drain_seconds'], 'number'],
  ['LMGATE_DATA_DIR', ['store', 'data_dir'], 'string'],
  ['LMGATE_SQLITE_PATH', ['store', 'sqlite_path'], 'string'],
  ['DATABASE_URL', ['store', 'database_url'], 'string'],
  ['REDIS_URL', ['redis', 'url'], 'string'],
  ['LMGATE_LOG_LEVEL', ['log', 'level'], 'string'],
  ['LMGATE_SIGNUP_OPEN', ['signup', 'open'], 'bool'],
  ['LMGATE_SIGNUP_CREDITS', ['signup', 'credits'], 'number'],
  ['LMGATE_DEMO_ACCOUNT', ['demo', 'seed_account'], 'bool'],
  ['LMGATE_DEFAULT_TIER', ['default_tier'], 'string'],
  ['LMGATE_USAGE_RETENTION_DAYS', ['usage', 'retention_days'], 'int'],
];

/** Variables that may hold secrets: `NAME_FILE` names a file holding the value instead. */
const SECRET_VARIABLES = new Set(['DATABASE_URL', 'REDIS_URL']);

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Settings layered over the file and environment (tests, CLI flags). */
  overrides?: Record<string, unknown>;
}

export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];

  const file: { path?: string } = {};
  const raw = readConfigFile(env, cwd, problems, file);
  const envSources = applyEnv(raw, env, problems);
  if (options.overrides) {
    deepMerge(raw, options.overrides);
    for (const path of envSources.keys()) if (hasPath(options.overrides, path.split('.'))) envSources.delete(path);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const path = issue.path.join('.');
        // A value that parsed as an int but is out of range (LMGATE_PORT=70000) fails in the
        // schema; name the variable, since the operator never wrote `server.port` anywhere.
        const variable = envSources.get(path);
        if (issue.code === 'unrecognized_keys') return `${path || '(root)'}: ${unrecognizedKeys(issue.keys, issue.path)}${file.path ? ` (in ${file.path})` : ''}`;
        return `${path || '(root)'}: ${issue.message}${variable ? ` (from ${variable})` : ''}`;
      }),
    );
  }
  const config = deepFreeze(parsed.data);
  recordWarnings(config, raw);
  return config;
}

/** Secrets referenced by `*_env` names in the config are read here, never inline. */
export function readSecretEnv(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/** `Unrecognized key: "prot" (did you mean "port"?)`: each key, with the known key it is likely a typo of. */
function unrecognizedKeys(keys: readonly string[], path: readonly PropertyKey[]): string {
  const known = knownKeysAt(configSchema, path);
  const described = keys.map((key) => {
    const suggestion = suggestKey(key, known);
    return `"${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`;
  });
  return `Unrecognized key${keys.length === 1 ? '' : 's'}: ${described.join(', ')}`;
}

function readConfigFile(env: NodeJS.ProcessEnv, cwd: string, problems: string[], file: { path?: string }): Record<string, unknown> {
  const named = env.LMGATE_CONFIG;
  const path = named ? resolve(cwd, named) : ['lmgate.yaml', 'lmgate.yml', 'lmgate.json'].map((f) => resolve(cwd, f)).find(existsSync);
  if (!path) return {};
  file.path = path;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    problems.push(`LMGATE_CONFIG: cannot read ${path}: ${(err as Error).message}`);
    return {};
  }
  try {
    const value: unknown = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    if (value == null) return {};
    if (typeof value !== 'object' || Array.isArray(value)) {
      problems.push(`${path}: must hold a mapping of settings`);
      return {};
    }
    return value as Record<string, unknown>;
  } catch (err) {
    problems.push(`${path}: ${(err as Error).message}`);
    return {};
  }
}

/** Applies the overrides; returns which variable set each dotted path, for error messages. */
function applyEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, problems: string[]): Map<string, string> {
  const sources = new Map<string, string>();
  for (const [variable, path, kind] of ENV_OVERRIDES) {
    let text = env[variable];
    let source = variable;
    const fileVariable = `${variable}_FILE`;
    if (text === undefined && SECRET_VARIABLES.has(variable) && env[fileVariable]) {
      source = fileVariable;
      try {
        text = readFileSync(env[fileVariable]!, 'utf8').trim();
      } catch (err) {
        problems.push(`${fileVariable}: ${(err as Error).message}`);
        continue;
      }
    }
    if (text === undefined || text === '') continue;
    const value = parseEnvValue(text, kind);
    if (value === undefined) {
      problems.push(`${variable}: ${JSON.stringify(text)} is not a valid ${kind}`);
      continue;
    }
    setPath(raw, path, value);
    sources.set(path.join('.'), source);
  }
  return sources;
}

function parseEnvValue(text: string, kind: EnvKind): unknown {
  switch (kind) {
    case 'string':
      return text;
    case 'int':
      return /^-?\d+$/.test(text) ? Number(text) : undefined;
    case 'number':
      return Number.isFinite(Number(text)) ? Number(text) : undefined;
    case 'bool':
      return parseBool(text);
    case 'list-or-bool':
      return parseBool(text) ?? text;
  }
}

function parseBool(text: string): boolean | undefined {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off)$/i.test(text)) return false;
  return undefined;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    if (isPlainObject(value) && isPlainObject(current)) deepMerge(current, value);
    else target[key] = value;
  }
}

function hasPath(source: Record<string, unknown>, path: string[]): boolean {
  let node: unknown = source;
  for (const key of path) {
    if (!isPlainObject(node) || !(key in node)) return false;
    node = node[key];
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
