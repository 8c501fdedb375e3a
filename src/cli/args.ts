// A subcommand's parsed arguments and the readers every subcommand shares.
import type { OrgStore } from '../store/org-store.js';
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

/** An organisation by id or name. */
export async function requireOrg(store: Pick<OrgStore, 'findOrg'>, ref: string | undefined): Promise<Account> {
  if (!ref) throw new CliError('name an organisation with --org (its id or name)');
  const org = await store.findOrg(ref);
  if (!org) throw new CliError(`no organisation ${JSON.stringify(ref)}`);
  return org;
}

/** A person's account by id or email that belongs to the organisation. */
export async function requireMember(store: Pick<AccountQueries, 'findAccount'> & Pick<OrgStore, 'findMembership'>, org: Account, ref: string | undefined): Promise<Account> {
  const person = await requireAccount(store, ref);
  if (!(await store.findMembership(org.id, person.id))) throw new CliError(`${person.email} is not a member of ${org.name}`);
  return person;
}

/** `--org` of a command that also serves a person's own account (webhooks): an organisation by id or name, else an account by id or email. */
export async function requireOrgOrAccount(store: Pick<OrgStore, 'findOrg'> & Pick<AccountQueries, 'findAccount'>, ref: string | undefined): Promise<Account> {
  if (!ref) throw new CliError('name the organisation (or account) with --org');
  const found = (await store.findOrg(ref)) ?? (await store.findAccount(ref));
  if (!found) throw new CliError(`no organisation or account ${JSON.stringify(ref)}`);
  return found;
}
