// lmgate credits grant | adjust | ledger
//
// Every change is a ledger entry (DESIGN "Money is a ledger"); the store moves the balance
// in the same transaction and records a 'balance' change event, so running instances
// re-read the balance.
import { storedBalances } from '../billing/balances.js';
import { formatCredits } from '../money.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { BalanceWouldGoNegativeError, type LedgerEntry } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { balanceFields, parseCreditAmount } from './credit-amount.js';
import { requireAccount, requireOrg, stringFlag, type ParsedCommand } from './args.js';
import { printRecord, printTable } from './output.js';

const DEFAULT_LEDGER_LIMIT = 50;

export async function creditsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const orgRef = stringFlag(args, 'org');
  // With --org the organisation is the account: every positional after the action is the rest.
  const [action, ...named] = args.positionals;
  const ref = orgRef === undefined ? named[0] : undefined;
  const rest = orgRef === undefined ? named.slice(1) : named;
  const accountOf = (store: Parameters<typeof requireAccount>[0] & Parameters<typeof requireOrg>[0]) => (orgRef === undefined ? requireAccount(store, ref) : requireOrg(store, orgRef));
  switch (action) {
    case 'grant':
    case 'adjust': {
      const what = `credits ${action}`;
      const amountMicros = parseCreditAmount(amountText(args, rest, what), what, { signed: action === 'adjust' });
      const reason = stringFlag(args, 'reason')?.trim();
      if (!reason) throw new CliError(`${what} needs --reason (it is kept in the ledger)`);
      return withStore(config, async (store) => {
        const account = await accountOf(store);
        try {
          const commands = new Commands(store);
          const change = { accountId: account.id, amountMicros, reason };
          const { entry, balanceMicros } = await (action === 'grant' ? commands.credits.grant(change, cliActor()) : commands.credits.adjust(change, cliActor()));
          printRecord(io, args.json, { ...entryView(entry), ...balanceFields(balanceMicros) });
          return 0;
        } catch (err) {
          if (!(err instanceof BalanceWouldGoNegativeError)) throw err;
          throw new CliError(
            `refused: taking ${formatCredits(-amountMicros)} credits would take the balance of ${account.kind === 'org' ? account.name : account.email} ` +
              `(${formatCredits(err.balanceMicros)} credits) below zero; nothing was changed`,
          );
        }
      });
    }
    case 'ledger': {
      if (rest.length > 0) throw new CliError(`credits ledger: unexpected ${JSON.stringify(rest[0])}`);
      const limit = ledgerLimit(args);
      return withStore(config, async (store) => {
        const account = await accountOf(store);
        // One more than shown tells whether older entries were left out.
        const entries = await store.listLedger(account.id, { limit: limit + 1 });
        const shown = entries.slice(0, limit);
        const balance = balanceFields((await storedBalances(store).of(account.id)).balanceMicros);
        if (args.json) {
          io.out(JSON.stringify({ account_id: account.id, email: account.email, ...balance, entries: shown.map(entryView) }));
          return 0;
        }
        printTable(io, false, shown.map(entryView), ['id', 'created_at', 'kind', 'amount', 'reason', 'reference']);
        if (entries.length > limit) io.out(`(the newest ${limit} entries; --limit K shows more)`);
        io.out('');
        io.out(`balance  ${balance.balance} credits (${balance.balance_micros} micros)`);
        return 0;
      });
    }
    default:
      throw new CliError('credits: expected grant, adjust or ledger');
  }
}

/**
 * The amount is a positional or --amount. node's parseArgs reads a bare `-5` as an option,
 * so a negative amount is written `-- -5` or `--amount=-5` (main.ts also joins
 * `--amount -5` into the latter).
 */
function amountText(args: ParsedCommand, rest: string[], what: string): string | undefined {
  const flag = stringFlag(args, 'amount');
  if (rest.length > (flag === undefined ? 1 : 0)) {
    throw new CliError(`${what}: unexpected ${JSON.stringify(rest[flag === undefined ? 1 : 0])} (give one amount, as N or --amount N)`);
  }
  return flag ?? rest[0];
}

function ledgerLimit(args: ParsedCommand): number {
  const text = stringFlag(args, 'limit');
  if (text === undefined) return DEFAULT_LEDGER_LIMIT;
  const limit = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new CliError(`--limit must be a whole number of entries, 1 or more (got ${JSON.stringify(text)})`);
  return limit;
}

function entryView(entry: LedgerEntry): Record<string, unknown> {
  return {
    id: entry.id,
    account_id: entry.accountId,
    kind: entry.kind,
    amount: formatCredits(entry.amountMicros),
    amount_micros: entry.amountMicros,
    reason: entry.reason,
    reference: entry.reference,
    created_at: entry.createdAt,
  };
}
