// lmgate alerts set | show: an organisation's (or account's) alerts. A balance below
// --balance-below, and each budget reaching one of --budget-thresholds (percentages), send
// one webhook (balance.low, budget.threshold) and one mail to its owners and billing
// members per crossing (alerts/alert-watch.ts).
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { ValidationError } from '../errors.js';
import { formatCredits } from '../money.js';
import type { AlertSettings, AlertSettingsUpdate } from '../store/alert-store.js';
import { parseBudgetThresholds } from '../alerts/thresholds.js';
import { requireOrgOrAccount, stringFlag, type ParsedCommand } from './args.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { parseCreditAmount } from './credit-amount.js';
import { printRecord } from './output.js';

export async function alertsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, extra] = args.positionals;
  if (extra !== undefined) throw new CliError(`alerts ${action}: unexpected ${JSON.stringify(extra)}`);
  return withStore(config, async (store) => {
    const account = await requireOrgOrAccount(store, stringFlag(args, 'org'));
    switch (action) {
      case 'set': {
        const update = updateOf(args);
        const settings = await new Commands(store).alerts.set(account.id, update, cliActor());
        printRecord(io, args.json, view(account.name ?? account.email, settings));
        return 0;
      }
      case 'show':
        printRecord(io, args.json, view(account.name ?? account.email, await store.findAlertSettings(account.id)));
        return 0;
      default:
        throw new CliError('alerts: expected set or show');
    }
  });
}

function updateOf(args: ParsedCommand): AlertSettingsUpdate {
  const below = stringFlag(args, 'balance-below');
  const thresholds = stringFlag(args, 'budget-thresholds');
  if (below === undefined && thresholds === undefined) throw new CliError('alerts set needs --balance-below N (or none) and/or --budget-thresholds P,P (or default)');
  const update: AlertSettingsUpdate = {};
  if (below !== undefined) update.balanceBelowMicros = below.trim() === 'none' ? null : parseCreditAmount(below, '--balance-below', { signed: false });
  if (thresholds !== undefined) {
    try {
      update.budgetThresholds = thresholds.trim() === 'default' ? null : parseBudgetThresholds(thresholds);
    } catch (err) {
      if (err instanceof ValidationError) throw new CliError(`--budget-thresholds: ${Object.values(err.fields).flat().join(' ')}`);
      throw err;
    }
  }
  return update;
}

function view(name: string, settings: AlertSettings): Record<string, unknown> {
  return {
    account: name,
    balance_below: settings.balanceBelowMicros === null ? 'none' : `${formatCredits(settings.balanceBelowMicros)} credits${settings.balanceArmed ? '' : ' (alerted; armed again by a top-up)'}`,
    balance_below_micros: settings.balanceBelowMicros,
    budget_thresholds: `${settings.budgetThresholds.map((percent) => `${percent} %`).join(', ')}${settings.customThresholds ? '' : ' (default)'}`,
  };
}
