// lmgate budgets set | list: an organisation's monthly budgets, its own or a member's. A
// request that would pass one is refused with 402 naming it (billing/spend-limit.ts).
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { formatCredits } from '../money.js';
import { requireMember, requireOrg, stringFlag, type ParsedCommand } from './args.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { parseCreditAmount } from './credit-amount.js';
import { printRecord, printTable } from './output.js';

export async function budgetsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, extra] = args.positionals;
  if (extra !== undefined) throw new CliError(`budgets ${action}: unexpected ${JSON.stringify(extra)}`);
  return withStore(config, async (store) => {
    const org = await requireOrg(store, stringFlag(args, 'org'));
    switch (action) {
      case 'set': {
        const memberRef = stringFlag(args, 'member');
        const member = memberRef === undefined ? null : await requireMember(store, org, memberRef);
        const monthly = stringFlag(args, 'monthly');
        if (monthly === undefined) throw new CliError('budgets set needs --monthly N (credits per calendar month, UTC), or --monthly none to remove it');
        const micros = monthly.trim() === 'none' ? null : parseCreditAmount(monthly, '--monthly', { signed: false });
        await new Commands(store).orgs.setBudget(org.id, member?.id ?? null, micros, cliActor());
        printRecord(io, args.json, { org: org.name, budget: member?.email ?? '(whole organisation)', monthly: micros === null ? 'none' : `${formatCredits(micros)} credits` });
        return 0;
      }
      case 'list': {
        const [budgets, members] = await Promise.all([store.listBudgets(org.id), store.listMembers(org.id)]);
        const emails = new Map(members.map((member) => [member.accountId, member.email]));
        const rows = budgets.map((budget) => ({
          budget: budget.memberId === null ? '(whole organisation)' : (emails.get(budget.memberId) ?? budget.memberId),
          monthly: formatCredits(budget.monthlyMicros),
          monthly_micros: budget.monthlyMicros,
        }));
        printTable(io, args.json, rows, ['budget', 'monthly']);
        return 0;
      }
      default:
        throw new CliError('budgets: expected set or list');
    }
  });
}
