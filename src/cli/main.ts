// `lmgate <command>`: the operator's tool. Reads the same config and environment as the
// server, so it works on SQLite and PostgreSQL alike, beside running instances.
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { InsecureListenError } from '../http/transport-policy.js';
import { NotFoundInStoreError } from '../store/store.js';
import { accountsCommand } from './accounts.js';
import { CliError, loadConfig, processIo, type CliIo } from './context.js';
import { keysCommand } from './keys.js';
import { migrate } from './migrate.js';

const USAGE = `usage: lmgate <command> [options]   (every command takes --json)

  serve                                        run the server (what npm start runs)
  migrate                                      apply pending migrations and exit
  accounts create --email E [--tier T] [--name N]
  accounts list | show A | suspend A | reactivate A | set-tier A T
  keys create A [--name N]                     prints the secret once
  keys list A | revoke KEY_ID

A is an account id or email.`;

export interface ParsedCommand {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
  json: boolean;
}

/** Runs one command; `env` is where config comes from (tests pass their own). */
export async function main(argv: string[], io: CliIo = processIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        email: { type: 'string' },
        tier: { type: 'string' },
        name: { type: 'string' },
        credits: { type: 'string' },
        reason: { type: 'string' },
        count: { type: 'string' },
        expires: { type: 'string' },
      },
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
    const config = loadConfig({ env });
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
