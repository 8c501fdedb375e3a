// lmgate orgs create | list | show | add-member | remove-member | require-sso
import { storedBalances } from '../billing/balances.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { OrgNameTakenError, Refusal } from '../errors.js';
import { formatCredits } from '../money.js';
import { ORG_ROLES, type OrgRole } from '../store/org-store.js';
import type { Account } from '../store/store.js';
import { assertTier } from './accounts.js';
import { requireAccount, requireOrg, stringFlag, type ParsedCommand } from './args.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { balanceFields } from './credit-amount.js';
import { printRecord, printTable } from './output.js';

export async function orgsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref, email] = args.positionals;
  return withStore(config, async (store) => {
    const commands = new Commands(store);
    switch (action) {
      case 'create': {
        const name = ref?.trim();
        if (!name) throw new CliError('orgs create needs a NAME');
        const owner = await requireAccount(store, stringFlag(args, 'owner') ?? failOwner());
        if (owner.kind === 'org') throw new CliError('the owner must be a person, not an organisation');
        const tier = stringFlag(args, 'tier') ?? config.default_tier;
        assertTier(config, tier);
        const org = await commands.orgs.create(name, owner, tier, cliActor()).catch((err: unknown) => {
          if (err instanceof OrgNameTakenError) throw new CliError(`an organisation named ${JSON.stringify(name)} already exists`);
          throw err;
        });
        printRecord(io, args.json, { ...orgView(org), owner: owner.email });
        return 0;
      }
      case 'list': {
        const orgs = await store.listOrgs();
        printTable(io, args.json, orgs.map((org) => ({ ...orgView(org), members: org.members, ...balanceFields(org.balanceMicros) })), ['id', 'name', 'tier', 'members', 'balance', 'created_at']);
        return 0;
      }
      case 'show': {
        const org = await requireOrg(store, ref);
        const [members, budgets, { balanceMicros }] = await Promise.all([store.listMembers(org.id), store.listBudgets(org.id), storedBalances(store).of(org.id)]);
        const emails = new Map(members.map((member) => [member.accountId, member.email]));
        const view = {
          ...orgView(org),
          ...balanceFields(balanceMicros),
          members: members.map((member) => ({ email: member.email, role: member.role, joined_at: member.joinedAt })),
          budgets: budgets.map((budget) => ({ member: budget.memberId === null ? null : (emails.get(budget.memberId) ?? budget.memberId), monthly: formatCredits(budget.monthlyMicros) })),
        };
        if (args.json) {
          io.out(JSON.stringify(view));
          return 0;
        }
        const { members: memberRows, budgets: budgetRows, ...record } = view;
        printRecord(io, false, record);
        io.out('');
        printTable(io, false, memberRows, ['email', 'role', 'joined_at']);
        if (budgetRows.length > 0) {
          io.out('');
          printTable(io, false, budgetRows.map((row) => ({ budget: row.member ?? '(whole organisation)', monthly: `${row.monthly} credits` })), ['budget', 'monthly']);
        }
        return 0;
      }
      case 'add-member': {
        const org = await requireOrg(store, ref);
        const person = await requirePerson(store, email);
        const role = roleOf(stringFlag(args, 'role') ?? 'member');
        await commands.orgs.setMember(org.id, person, role, cliActor()).catch(explainRefusal);
        printRecord(io, args.json, { org: org.name, member: person.email, role });
        return 0;
      }
      case 'remove-member': {
        const org = await requireOrg(store, ref);
        const person = await requirePerson(store, email);
        const revokeKeys = args.flags['revoke-keys'] === true;
        const { removed, revokedKeyIds } = await commands.orgs.removeMember(org.id, person, revokeKeys, cliActor()).catch(explainRefusal);
        if (!removed) throw new CliError(`${person.email} is not a member of ${org.name}`);
        printRecord(io, args.json, { org: org.name, removed: person.email, keys: revokeKeys ? `${revokedKeyIds.length} revoked` : 'kept by the organisation' });
        return 0;
      }
      case 'require-sso': {
        const org = await requireOrg(store, ref);
        if (email !== 'on' && email !== 'off') throw new CliError('orgs require-sso ORG on|off');
        printRecord(io, args.json, orgView(await commands.orgs.requireSso(org.id, email === 'on', cliActor())));
        return 0;
      }
      default:
        throw new CliError('orgs: expected create, list, show, add-member, remove-member or require-sso');
    }
  });
}

function orgView(org: Account): Record<string, unknown> {
  return { id: org.id, name: org.name, tier: org.tier, status: org.status, require_sso: org.requireSso, created_at: org.createdAt };
}

function failOwner(): never {
  throw new CliError('orgs create needs --owner EMAIL (an existing account)');
}

async function requirePerson(store: Parameters<typeof requireAccount>[0], ref: string | undefined): Promise<Account> {
  if (!ref) throw new CliError('name the person by email or account id');
  const person = await store.findAccount(ref);
  if (!person) throw new CliError(`no account ${JSON.stringify(ref)}: create it first (lmgate accounts create --email ${ref})`);
  if (person.kind === 'org') throw new CliError(`${ref} is an organisation, not a person`);
  return person;
}

function roleOf(text: string): OrgRole {
  if (!(ORG_ROLES as readonly string[]).includes(text)) throw new CliError(`--role: expected one of ${ORG_ROLES.join(', ')} (got ${JSON.stringify(text)})`);
  return text as OrgRole;
}

function explainRefusal(err: unknown): never {
  if (err instanceof Refusal && err.code === 'org_last_owner') throw new CliError('refused: the organisation keeps at least one owner; make someone else owner first');
  throw err;
}
