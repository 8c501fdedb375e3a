// lmgate accounts create | list | show | suspend | reactivate | set-tier | set-price-multiplier | set-role | set-password | reset-link
import { storedBalances } from '../billing/balances.js';
import { multiplierPpm } from '../billing/pricing.js';
import { lacksNeededSubscription, subscriptionWarning, Tiers } from '../billing/tiers.js';
import { describeExpiry, parseExpiry } from '../expiry.js';
import type { Config } from '../config/schema.js';
import { Commands } from '../commands/commands.js';
import { configuredOrigin, linkTo, RESET_PAGE_PATH } from '../auth/account-links.js';
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/passwords.js';
import { EmailTakenError } from '../errors.js';
import type { Account } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { balanceFields, parseCreditAmount } from './credit-amount.js';
import { requireAccount, stringFlag, type ParsedCommand } from './args.js';
import { printRecord, printTable } from './output.js';

export async function accountsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref, value] = args.positionals;
  const tiers = new Tiers(config);
  const accountView = (account: Account) => accountRecord(account, tiers);
  return withStore(config, async (store) => {
    switch (action) {
      case 'create': {
        const email = stringFlag(args, 'email');
        if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) throw new CliError('accounts create needs --email with a valid address');
        const tier = stringFlag(args, 'tier') ?? config.default_tier;
        assertTier(config, tier);
        const creditsText = stringFlag(args, 'credits');
        const initialMicros = creditsText === undefined ? 0 : parseCreditAmount(creditsText, '--credits', { signed: false });
        const { account, balanceMicros } = await new Commands(store)
          .accounts.create({ email, name: stringFlag(args, 'name') ?? null, tier, creditsMicros: initialMicros, creditsReason: 'initial credits' }, cliActor())
          .catch((err: unknown) => {
            if (err instanceof EmailTakenError) throw new CliError(`an account with email ${email} already exists`);
            throw err;
          });
        printRecord(io, args.json, { ...accountView(account), ...balanceFields(balanceMicros) });
        return 0;
      }
      case 'list':
        printTable(io, args.json, (await store.listAccounts()).map(accountView), ['id', 'email', 'status', 'tier', 'served_tier', 'created_at']);
        return 0;
      case 'show': {
        const account = await requireAccount(store, ref);
        printRecord(io, args.json, { ...accountView(account), ...balanceFields((await storedBalances(store).of(account.id)).balanceMicros) });
        return 0;
      }
      case 'suspend':
      case 'reactivate': {
        const account = await requireAccount(store, ref);
        const updated = await new Commands(store).accounts.setStatus(account.id, action === 'suspend' ? 'suspended' : 'active', cliActor());
        printRecord(io, args.json, accountView(updated));
        return 0;
      }
      case 'set-tier': {
        const account = await requireAccount(store, ref);
        if (!value) throw new CliError('accounts set-tier needs an account and a tier');
        assertTier(config, value);
        const updated = await new Commands(store).accounts.setTier(account.id, value, cliActor(), compOf(args));
        printRecord(io, args.json, accountView(updated));
        const tier = tiers.of(updated);
        if (lacksNeededSubscription(updated, tier)) io.err(subscriptionWarning(updated, tier.name));
        return 0;
      }
      case 'set-price-multiplier': {
        const account = await requireAccount(store, ref);
        const ppm = multiplierOf(value);
        printRecord(io, args.json, accountView(await new Commands(store).accounts.setPriceMultiplier(account.id, ppm, cliActor())));
        return 0;
      }
      case 'set-role': {
        const account = await requireAccount(store, ref);
        if (value !== 'operator' && value !== 'customer') throw new CliError('accounts set-role needs an account and a role: operator or customer');
        printRecord(io, args.json, accountView(await new Commands(store).accounts.setRole(account.id, value, cliActor())));
        return 0;
      }
      case 'set-password': {
        const account = await requireAccount(store, ref);
        const { readSecret } = await import('./secret-input.js');
        const password = await readSecret(io.secretInput ?? process.stdin, process.stderr, `New password for ${account.email}`);
        if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH) {
          throw new CliError(`a password needs ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters`);
        }
        await new Commands(store).accounts.setPassword(account.id, await hashPassword(password), cliActor());
        printRecord(io, args.json, { id: account.id, email: account.email, password: 'set' });
        return 0;
      }
      case 'reset-link': {
        const account = await requireAccount(store, ref);
        const { token, expiresAt } = await new Commands(store).accounts.issuePasswordReset(account.id);
        printRecord(io, args.json, { email: account.email, link: linkTo(configuredOrigin(config), RESET_PAGE_PATH, token), expires_at: expiresAt });
        return 0;
      }
      default:
        throw new CliError('accounts: expected create, list, show, suspend, reactivate, set-tier, set-price-multiplier, set-role, set-password or reset-link');
    }
  });
}

export function assertTier(config: Config, tier: string): void {
  if (!(tier in config.tiers)) throw new CliError(`no tier "${tier}" (configured: ${Object.keys(config.tiers).join(', ')})`);
}

/** `--comp [--until DATE]`: the tier without its subscription, until the end of DATE (UTC) or a full ISO time. */
function compOf(args: ParsedCommand): { until: string | null } | undefined {
  const untilText = stringFlag(args, 'until');
  if (args.flags.comp !== true) {
    if (untilText !== undefined) throw new CliError('accounts set-tier: --until goes with --comp');
    return undefined;
  }
  if (untilText === undefined) return { until: null };
  const parsed = parseExpiry(untilText);
  if ('problem' in parsed) throw new CliError(parsed.problem === 'past' ? `--until ${untilText} has passed` : `--until takes a date (YYYY-MM-DD) or an ISO 8601 time, not ${JSON.stringify(untilText)}`);
  return { until: parsed.expiresAt };
}

/** `1.2` for 20 % more than the configured prices, `0.9` for 10 % off. */
function multiplierOf(value: string | undefined): number {
  if (value === undefined || !/^\d+(\.\d+)?$/.test(value)) throw new CliError('accounts set-price-multiplier needs an account and a multiplier, e.g. 0.9 (10 % off) or 1.2 (20 % more)');
  try {
    return multiplierPpm(Number(value));
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

function accountRecord(account: Account, tiers: Tiers): Record<string, unknown> {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    status: account.status,
    tier: account.tier,
    // Its own tier, or the default one when the config no longer has its own.
    served_tier: tiers.of(account).name,
    price_multiplier: account.priceMultiplierPpm / 1_000_000,
    role: account.role,
    subscription_status: account.subscriptionStatus,
    // A complimentary plan: the tier without its subscription, until then ('none': no end).
    ...(account.comp?.tier === account.tier ? { comp_until: describeExpiry(account.comp.until) } : {}),
    created_at: account.createdAt,
  };
}
