// A subcommand's parsed arguments and the readers every subcommand shares.
import type { AccountQueries } from '../store/queries.js';
import type { Account } from '../store/store.js';
import { CliError } from './context.js';

export interface ParsedCommand {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
  json: boolean;
}

export function stringFlag(args: ParsedCommand, name: string): string | undefined {
  const value = args.flags[name];
  return typeof value === 'string' ? value : undefined;
}

export async function requireAccount(store: Pick<AccountQueries, 'findAccount'>, ref: string | undefined): Promise<Account> {
  if (!ref) throw new CliError('name an account by id or email');
  const account = await store.findAccount(ref);
  if (!account) throw new CliError(`no account ${JSON.stringify(ref)}`);
  return account;
}
