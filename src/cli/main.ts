// `lmgate <command>`: the operator's tool. Reads the same config and environment as the
// server, so it works on SQLite and PostgreSQL alike, beside running instances.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../config/load.js';
import { InsecureListenError } from '../http/transport-policy.js';
import { findConnectionError } from '../store/connection-error.js';
import { NotFoundInStoreError } from '../store/store.js';
import { accountsCommand } from './accounts.js';
import { adminKeysCommand } from './admin-keys.js';
import { alertsCommand } from './alerts.js';
import type { ParsedCommand } from './args.js';
import { auditCommand } from './audit.js';
import { codesCommand } from './codes.js';
import { CliError, loadConfig, processIo, type CliIo } from './context.js';
import { budgetsCommand } from './budgets.js';
import { creditsCommand } from './credits.js';
import { helpFor, isCommand, OVERVIEW_HELP } from './help.js';
import { keysCommand } from './keys.js';
import { migrate } from './migrate.js';
import { orgsCommand } from './orgs.js';
import { paymentsCommand } from './payments.js';
import { storeCommand } from './store-copy.js';
import { upstreamsCommand } from './upstreams.js';
import { usageCommand } from './usage.js';
import { webhooksCommand } from './webhooks.js';

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  email: { type: 'string' },
  tier: { type: 'string' },
  name: { type: 'string' },
  credits: { type: 'string' },
  amount: { type: 'string' },
  limit: { type: 'string' },
  reason: { type: 'string' },
  count: { type: 'string' },
  expires: { type: 'string' },
  models: { type: 'string' },
  ips: { type: 'string' },
  rpm: { type: 'string' },
  'credit-limit': { type: 'string' },
  url: { type: 'string' },
  workers: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  scope: { type: 'string' },
  comp: { type: 'boolean' },
  until: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  version: { type: 'boolean' },
  org: { type: 'string' },
  owner: { type: 'string' },
  member: { type: 'string' },
  role: { type: 'string' },
  monthly: { type: 'string' },
  'revoke-keys': { type: 'boolean' },
  events: { type: 'string' },
  'balance-below': { type: 'string' },
  'budget-thresholds': { type: 'string' },
  account: { type: 'string' },
  format: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Options that name a list: given more than once, their values add up (`--scope read --scope keys`). */
const LIST_OPTIONS = new Set(['scope', 'models', 'ips']);

/** Runs one command; `env` is where config comes from (tests pass their own). */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeOptionValues(argv),
      allowPositionals: true,
      strict: true,
      // Every option may repeat here, so that a repeat is seen: flagsOf adds lists up and refuses the rest.
      options: Object.fromEntries(Object.entries(OPTIONS).map(([name, option]) => [name, { ...option, multiple: true }])),
    });
  } catch (err) {
    io.err(`lmgate: ${optionProblem(err)}\n(lmgate help lists the commands; lmgate COMMAND --help, one command's options)`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.version) {
    io.out(`lmgate ${version()}`);
    return 0;
  }
  if (command === 'help' || parsed.values.help) {
    const words = command === 'help' ? rest : parsed.positionals;
    const help = helpFor(words.slice(0, 2));
    if (help === undefined) {
      io.err(`lmgate: no command "${words.join(' ')}"\n\n${OVERVIEW_HELP}`);
      return 2;
    }
    io.out(help);
    return 0;
  }
  if (!command) {
    // Running with no command is a mistake, not a request for help: usage goes to stderr.
    io.err(OVERVIEW_HELP);
    return 2;
  }
  if (!isCommand(command)) {
    io.err(`lmgate: unknown command "${command}"\n\n${OVERVIEW_HELP}`);
    return 2;
  }

  try {
    const flags = flagsOf(parsed.values);
    const args: ParsedCommand = { positionals: rest, flags, json: flags.json === true };
    const config = loadConfig({ env, overrides: serverOverrides(command, flags) });
    switch (command) {
      case 'serve': {
        // Loaded on demand: the operator commands must not pull in the whole HTTP app
        // (Fastify, routes, model backends) just to create an account or revoke a key.
        const { serve } = await import('./serve.js');
        return await serve(config, io);
      }
      case 'migrate':
        return await migrate(config, io, args.json);
      case 'accounts':
        return await accountsCommand(config, args, io);
      case 'keys':
        return await keysCommand(config, args, io);
      case 'credits':
        return await creditsCommand(config, args, io);
      case 'orgs':
        return await orgsCommand(config, args, io);
      case 'budgets':
        return await budgetsCommand(config, args, io);
      case 'alerts':
        return await alertsCommand(config, args, io);
      case 'codes':
        return await codesCommand(config, args, io);
      case 'payments':
        return await paymentsCommand(config, args, io);
      case 'admin-keys':
        return await adminKeysCommand(config, args, io);
      case 'audit':
        return await auditCommand(config, args, io);
      case 'webhooks':
        return await webhooksCommand(config, args, io);
      case 'upstreams':
        return await upstreamsCommand(config, args, io);
      case 'store':
        return await storeCommand(config, args, io);
      case 'usage':
        return await usageCommand(config, args, io);
      default:
        throw new CliError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (
      err instanceof CliError ||
      err instanceof ConfigError ||
      err instanceof InsecureListenError ||
      err instanceof NotFoundInStoreError
    ) {
      io.err(`lmgate: ${err.message}`);
      return 1;
    }
    const unreachable = findConnectionError(err);
    if (unreachable) {
      io.err(`lmgate: ${unreachable.message}`);
      return 1;
    }
    throw err;
  }
}

/** parseArgs' own words assume a reader who knows parseArgs. */
function optionProblem(err: unknown): string {
  const { code, message } = err as { code?: string; message: string };
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? message}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /argument missing/.test(message) ? `${option} needs a value` : `${option} takes no value`;
    default:
      return message;
  }
}

/** Each option once: a list's repeats joined with commas, any other repeat refused. */
function flagsOf(values: Record<string, Array<string | boolean> | undefined>): ParsedCommand['flags'] {
  const flags: ParsedCommand['flags'] = {};
  for (const [name, given] of Object.entries(values)) {
    if (given === undefined || given.length === 0) continue;
    if (typeof given[0] === 'boolean') flags[name] = true;
    else if (given.length === 1 || LIST_OPTIONS.has(name)) flags[name] = given.join(',');
    else throw new CliError(`--${name} was given ${given.length} times (${given.map((v) => JSON.stringify(v)).join(', ')}); give it once`);
  }
  return flags;
}

/** `serve --port N --host H --workers N` over the file and the environment. */
function serverOverrides(command: string, flags: ParsedCommand['flags']): Record<string, unknown> | undefined {
  const server: Record<string, unknown> = {};
  const port = flags.port;
  const host = flags.host;
  const workers = flags.workers;
  for (const [name, value] of [['port', port], ['host', host], ['workers', workers]] as const) {
    if (value !== undefined && command !== 'serve') throw new CliError(`--${name} goes with serve`);
  }
  if (typeof port === 'string') {
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65_535) throw new CliError(`--port: ${JSON.stringify(port)} is not a port number (0 to 65535)`);
    server.port = Number(port);
  }
  if (typeof host === 'string') {
    if (host.trim() === '') throw new CliError('--host: give an address, e.g. 127.0.0.1 or 0.0.0.0');
    server.host = host;
  }
  if (typeof workers === 'string') {
    if (!/^\d+$/.test(workers)) throw new CliError(`--workers: ${JSON.stringify(workers)} is not a whole number`);
    server.workers = Number(workers);
  }
  return Object.keys(server).length > 0 ? { server } : undefined;
}

/** The version in package.json, two folders up from src/cli/ and from dist/cli/ alike. */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** Options that take a value; a value may be a negative number (`--amount -5`). */
const VALUE_OPTIONS = new Set(
  Object.entries(OPTIONS)
    .filter(([, option]) => option.type === 'string')
    .map(([name]) => `--${name}`),
);
const NEGATIVE_NUMBER = /^-\.?\d/;

/**
 * parseArgs refuses `--amount -5` and `adjust A -5`: in strict mode anything that starts
 * with a dash looks like an option. No lmgate option is a digit, so a negative number is
 * never one: after an option that takes a value it is that value (joined as
 * `--amount=-5`), anywhere else it is a positional (moved behind `--`, in order).
 */
function joinNegativeOptionValues(argv: string[]): string[] {
  const joined: string[] = [];
  const numbers: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return [...joined, '--', ...numbers, ...argv.slice(i + 1)];
    const next = argv[i + 1];
    if (VALUE_OPTIONS.has(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else if (NEGATIVE_NUMBER.test(arg)) {
      numbers.push(arg);
    } else {
      joined.push(arg);
    }
  }
  return numbers.length > 0 ? [...joined, '--', ...numbers] : joined;
}
