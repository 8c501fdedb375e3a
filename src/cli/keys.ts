// lmgate keys create | update | list | revoke
import { NO_CONTROLS, parseControls, type ControlsInput } from '../auth/key-controls.js';
import { maskedKey } from '../auth/keys.js';
import { formatCredits } from '../money.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { ValidationError } from '../errors.js';
import { describeExpiry } from '../expiry.js';
import type { ApiKeyRecord, KeyControls } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { requireAccount, requireMember, requireOrg, stringFlag, type ParsedCommand } from './args.js';
import { parseCreditAmount } from './credit-amount.js';
import { printRecord, printTable } from './output.js';

/** Each control's flag, for messages. */
const FLAGS: Record<string, string> = {
  expiresAt: '--expires',
  allowedModels: '--models',
  allowedIps: '--ips',
  rpm: '--rpm',
  creditLimitMicros: '--credit-limit',
  creditLimitPeriod: '--credit-limit',
};

export async function keysCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref] = args.positionals;
  return withStore(config, async (store) => {
    switch (action) {
      case 'create': {
        const orgRef = stringFlag(args, 'org');
        // An organisation's key is made by one of its members (it outlives their membership).
        const org = orgRef === undefined ? undefined : await requireOrg(store, orgRef);
        if (org && ref !== undefined) throw new CliError(`keys create --org: unexpected ${JSON.stringify(ref)} (the key is the organisation's)`);
        if (org && stringFlag(args, 'member') === undefined) throw new CliError('keys create --org needs --member EMAIL: the member who makes the key');
        const account = org ?? (await requireAccount(store, ref));
        const member = org && (await requireMember(store, org, stringFlag(args, 'member')));
        const controls = { ...NO_CONTROLS, ...controlsOf(args) };
        const { record, secret } = await new Commands(store).keys.create(account.id, stringFlag(args, 'name') ?? 'default', controls, cliActor(), member?.id ?? null);
        if (args.json) io.out(JSON.stringify({ ...keyView(record), secret }));
        else {
          printKey(io, false, record);
          io.out('');
          io.out('Secret (shown once, it cannot be retrieved later):');
          io.out(secret);
        }
        return 0;
      }
      case 'update': {
        if (!ref) throw new CliError('keys update needs a key id');
        const name = stringFlag(args, 'name')?.trim();
        if (name === '') throw new CliError('--name: give the key a name');
        const controls = controlsOf(args);
        if (name === undefined && Object.keys(controls).length === 0) throw new CliError('keys update: nothing to change (--name, --expires, --models, --ips, --rpm, --credit-limit)');
        if (!(await store.findKeyById(ref))) throw new CliError(`no key ${JSON.stringify(ref)}`);
        printKey(io, args.json, await new Commands(store).keys.update(ref, { name, controls }, undefined, cliActor()));
        return 0;
      }
      case 'list': {
        const account = await requireAccount(store, ref);
        printTable(io, args.json, (await store.listKeys(account.id)).map(keyView), ['id', 'name', 'key', 'status', 'created_at', 'last_used_at']);
        return 0;
      }
      case 'revoke': {
        if (!ref) throw new CliError('keys revoke needs a key id');
        if (!(await store.findKeyById(ref))) throw new CliError(`no key ${JSON.stringify(ref)}`);
        printKey(io, args.json, await new Commands(store).keys.revoke(ref, undefined, cliActor()));
        return 0;
      }
      default:
        throw new CliError('keys: expected create, update, list or revoke');
    }
  });
}

/** The controls the flags give; `none` clears one. */
function controlsOf(args: ParsedCommand): Partial<KeyControls> {
  const flag = (name: string) => {
    const value = stringFlag(args, name);
    return value === undefined ? undefined : value.trim() === 'none' ? null : value;
  };
  const list = (name: string) => {
    const value = flag(name);
    return value === undefined || value === null ? value : value.split(',');
  };
  const rpm = flag('rpm');
  if (typeof rpm === 'string' && !/^\d+$/.test(rpm.trim())) throw new CliError(`--rpm: ${JSON.stringify(rpm)} is not a whole number`);
  const input: ControlsInput = {
    expiresAt: flag('expires'),
    allowedModels: list('models'),
    allowedIps: list('ips'),
    rpm: typeof rpm === 'string' ? Number(rpm) : rpm,
    ...creditLimitOf(flag('credit-limit')),
  };
  try {
    return parseControls(input);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new CliError(Object.entries(err.fields).map(([field, messages]) => `${FLAGS[field] ?? field}: ${messages.join(' ')}`).join('\n'));
  }
}

/** `--credit-limit 25` (in total), `25/month` (each calendar month, UTC), or none. */
function creditLimitOf(text: string | null | undefined): Pick<ControlsInput, 'creditLimitMicros' | 'creditLimitPeriod'> {
  if (text === undefined) return {};
  if (text === null) return { creditLimitMicros: null };
  const [amount = '', period, ...rest] = text.trim().split('/');
  if (rest.length > 0) throw new CliError('--credit-limit: give credits, in total (25) or per month (25/month)');
  return { creditLimitMicros: parseCreditAmount(amount.trim(), '--credit-limit', { signed: false }), ...(period === undefined ? {} : { creditLimitPeriod: period }) };
}

/**
 * As text, the expiry as `--expires` was written (`end of 2026-12-31 UTC`) and the credit
 * limit in words; JSON has the instant and the limit's parts too.
 */
function printKey(io: CliIo, json: boolean, key: ApiKeyRecord): void {
  const view = keyView(key);
  if (json) return printRecord(io, true, view);
  const { expires_at: _instant, credit_limit_micros: _micros, credit_limit_period: _period, ...text } = view;
  printRecord(io, false, text);
}

function keyView(key: ApiKeyRecord): Record<string, unknown> {
  const { expiresAt, allowedModels, allowedIps, rpm, creditLimit } = key.controls;
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    key: maskedKey(key),
    status: key.revokedAt ? (key.revokedReason === 'leaked' ? 'revoked: leaked' : 'revoked') : 'active',
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    leak_url: key.leakUrl,
    expires: describeExpiry(expiresAt),
    expires_at: expiresAt,
    models: allowedModels?.join(',') ?? null,
    ips: allowedIps?.join(',') ?? null,
    rpm,
    credit_limit: creditLimit === null ? null : `${formatCredits(creditLimit.amountMicros)} ${creditLimit.period === 'month' ? 'per month' : 'in total'}`,
    credit_limit_micros: creditLimit?.amountMicros ?? null,
    credit_limit_period: creditLimit?.period ?? null,
  };
}
