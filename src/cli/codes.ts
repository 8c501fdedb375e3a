// lmgate codes create | list | disable
//
// Redemption codes carry credits a customer adds in the dashboard (POST
// /api/dashboard/redeem), with no payment provider needed. Only a code's hash is stored:
// `create` prints the codes once, `list` shows everything but them.
import { formatCredits } from '../money.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { Refusal } from '../errors.js';
import { describeExpiry, parseExpiry } from '../expiry.js';
import type { RedemptionCode } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { parseCreditAmount } from './credit-amount.js';
import { stringFlag, type ParsedCommand } from './args.js';
import { printTable } from './output.js';

const MAX_COUNT = 1000;

export async function codesCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ...rest] = args.positionals;
  if (action === 'disable') {
    const [codeId, ...extra] = rest;
    if (!codeId || extra.length > 0) throw new CliError('codes disable needs one code id (see codes list)');
    return withStore(config, async (store) => {
      const code = await new Commands(store).codes.disable(codeId, cliActor()).catch((err: unknown) => {
        if (err instanceof Refusal && err.code === 'code_redeemed') throw new CliError(`code ${codeId} was redeemed already; nothing was changed`);
        if (err instanceof Refusal) throw new CliError(`no code ${JSON.stringify(codeId)}`);
        throw err;
      });
      printTable(io, args.json, [codeView(code)], ['hint', 'amount', 'expires', 'disabled_at', 'id']);
      return 0;
    });
  }
  if (rest.length > 0) throw new CliError(`codes ${action}: unexpected ${JSON.stringify(rest[0])}`);
  switch (action) {
    case 'create': {
      const amountMicros = parseCreditAmount(stringFlag(args, 'credits'), 'codes create --credits', { signed: false });
      const count = parseCount(stringFlag(args, 'count'));
      const expiresAt = expiryOf(stringFlag(args, 'expires'));
      return withStore(config, async (store) => {
        const created = await new Commands(store).codes.create({ amountMicros, count, expiresAt }, cliActor());
        const rows = created.map(({ code, record }) => ({ code, ...codeView(record) }));
        printTable(io, args.json, rows, ['code', 'amount', 'expires', 'id']);
        if (!args.json) {
          io.out('');
          io.out(`${count === 1 ? 'This code is' : `These ${count} codes are`} shown once: only a hash is stored.`);
        }
        return 0;
      });
    }
    case 'list':
      return withStore(config, async (store) => {
        const rows = (await store.listRedemptionCodes()).map(codeView);
        printTable(io, args.json, rows, ['hint', 'amount', 'expires', 'created_at', 'redeemed_by', 'redeemed_at', 'disabled_at', 'id']);
        return 0;
      });
    default:
      throw new CliError('codes: expected create, list or disable');
  }
}

function parseCount(text: string | undefined): number {
  if (text === undefined) return 1;
  const count = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
    throw new CliError(`--count must be a whole number from 1 to ${MAX_COUNT} (got ${JSON.stringify(text)})`);
  }
  return count;
}

/** `--expires`: see expiry.ts. */
function expiryOf(text: string | undefined): string | null {
  if (text === undefined) return null;
  const expiry = parseExpiry(text);
  if ('expiresAt' in expiry) return expiry.expiresAt;
  if (expiry.problem === 'past') throw new CliError(`--expires: ${text} is already past`);
  throw new CliError(`--expires: ${JSON.stringify(text)} is not a date (YYYY-MM-DD or an ISO 8601 time)`);
}

function codeView(code: RedemptionCode): Record<string, unknown> {
  return {
    id: code.id,
    hint: code.hint,
    amount: formatCredits(code.amountMicros),
    amount_micros: code.amountMicros,
    expires: describeExpiry(code.expiresAt),
    expires_at: code.expiresAt,
    created_at: code.createdAt,
    redeemed_by: code.redeemedBy,
    redeemed_at: code.redeemedAt,
    disabled_at: code.disabledAt,
  };
}
