// `lmgate <command>`: the operator's tool. Reads the same config and environment as the
// server, so it works on SQLite and PostgreSQL alike, beside running instances.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '../config/load.js';
import { InsecureListenError } from '../http/transport-policy.js';
import { NotFoundInStoreError } from '../store/store.js';
import { accountsCommand } from './accounts.js';
import { adminKeysCommand } from './admin-keys.js';
import type { ParsedCommand } from './args.js';
import { auditCommand } from './audit.js';
import { codesCommand } from './codes.js';
import { CliError, loadConfig, processIo, type CliIo } from './context.js';
import { creditsCommand } from './credits.js';
import { keysCommand } from './keys.js';
import { migrate } from './migrate.js';
import { paymentsCommand } from './payments.js';
import { storeCommand } from './store-copy.js';
import { upstreamsCommand } from './upstreams.js';

const USAGE = `usage: lmgate <command> [options]   (every command takes --json)

  serve [--workers N]                          run the server (what npm start runs); N processes
                                               sharing the port need shared mode (REDIS_URL)
  migrate                                      apply pending migrations and exit
  accounts create --email E [--tier T] [--name N] [--credits N]
  accounts list | show A | suspend A | reactivate A | set-tier A T | set-price-multiplier A M
  accounts set-role A operator|customer        operators use the admin API and console
                                               with their dashboard session
  accounts set-password A                      the password from stdin, or asked for twice
  accounts reset-link A                        a one-time link (an hour) to set a new password
  keys create A [--name N] [controls]          prints the secret once
  keys update KEY_ID [--name N] [controls]     rename, or change its controls
  keys list A | revoke KEY_ID
                                               controls: --expires DATE, --models P,P
                                               (globs), --ips CIDR,CIDR, --rpm N,
                                               --credit-limit N or N/month; the
                                               word none clears one
  credits grant A N --reason R                 add N credits
  credits adjust A ±N --reason R               add or take credits, never below zero
                                               (adjust A -5 --reason R takes 5)
  credits ledger A [--limit K]                 newest K entries (50) and the balance
  codes create --credits N [--count K] [--expires DATE]
                                               redemption codes, printed once
  codes list                                   every code: its last characters (LMG-…-7K3Q),
                                               amount, expiry, redeemed by/at
  codes disable CODE_ID                        the code no longer redeems
  admin-keys create --scope S[,S] [--name N]   an admin API key (scopes: read, accounts,
                                               credits, keys); prints the secret once
  admin-keys list | revoke ID
  audit [--limit K]                            the newest K admin actions (50)
  payments list [--limit K]                    payments received through Stripe, newest first
  payments replay EVENT_ID                     apply a stored Stripe event again (idempotent)
  upstreams [--url URL]                        each upstream deployment's health, in-flight
                                               requests, outcomes and latency, as the
                                               running server sees it (its /metrics)
  store copy --to URL                          copy the SQLite store into an empty PostgreSQL
                                               database (postgres://...) and verify it; stop
                                               the server first, then start it with
                                               DATABASE_URL=URL

A is an account id or email. N is in credits, up to 6 decimals (1 credit = 1,000,000
micro-credits).`;

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
  to: { type: 'string' },
  scope: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Runs one command; `env` is where config comes from (tests pass their own). */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeOptionValues(argv),
      allowPositionals: true,
      strict: true,
      options: OPTIONS,
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help) {
    io.out(USAGE);
    return 0;
  }
  if (!command) {
    // Running with no command is a mistake, not a request for help: usage goes to stderr.
    io.err(USAGE);
    return 2;
  }
  const args: ParsedCommand = { positionals: rest, flags: parsed.values, json: parsed.values.json === true };

  try {
    const workers = parsed.values.workers;
    const config = loadConfig({ env, overrides: workers === undefined ? undefined : { server: { workers: Number(workers) } } });
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
      case 'codes':
        return await codesCommand(config, args, io);
      case 'payments':
        return await paymentsCommand(config, args, io);
      case 'admin-keys':
        return await adminKeysCommand(config, args, io);
      case 'audit':
        return await auditCommand(config, args, io);
      case 'upstreams':
        return await upstreamsCommand(config, args, io);
      case 'store':
        return await storeCommand(config, args, io);
      default:
        throw new CliError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } catch (err) {
    if (err instanceof CliError || err instanceof ConfigError || err instanceof InsecureListenError || err instanceof NotFoundInStoreError) {
      io.err(`lmgate: ${err.message}`);
      return 1;
    }
    throw err;
  }
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
