// lmgate webhooks add | list | remove | rotate: an account's webhook endpoints. A secret
// is printed once, when the endpoint is added or its secret rotated.
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { ValidationError } from '../errors.js';
import type { WebhookEndpoint } from '../store/webhook-store.js';
import { CliError, withStore, type CliIo } from './context.js';
import { requireOrgOrAccount, stringFlag, type ParsedCommand } from './args.js';
import { printRecord, printTable } from './output.js';

export async function webhooksCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref, ...extra] = args.positionals;
  if (extra.length > 0) throw new CliError(`webhooks ${action}: unexpected ${JSON.stringify(extra[0])}`);
  return withStore(config, async (store) => {
    const commands = new Commands(store);
    switch (action) {
      case 'add': {
        const account = await requireOrgOrAccount(store, stringFlag(args, 'org'));
        if (!ref) throw new CliError('webhooks add needs the URL events are sent to');
        const events = stringFlag(args, 'events');
        if (!events) throw new CliError('webhooks add needs --events T,T (for example balance.low,key.revoked)');
        const { endpoint, secret } = await asCliError(() => commands.webhooks.add(account.id, ref, events.split(',').map((type) => type.trim())));
        printSecret(io, args.json, endpoint, secret);
        return 0;
      }
      case 'list': {
        if (ref) throw new CliError(`webhooks list: unexpected ${JSON.stringify(ref)} (name the account with --org)`);
        const account = await requireOrgOrAccount(store, stringFlag(args, 'org'));
        printTable(io, args.json, (await store.listWebhookEndpoints(account.id)).map(endpointView), ['id', 'url', 'events', 'created_at']);
        return 0;
      }
      case 'remove': {
        if (!ref) throw new CliError('webhooks remove needs an endpoint id (see webhooks list)');
        printRecord(io, args.json, endpointView(await commands.webhooks.remove(ref)));
        return 0;
      }
      case 'rotate': {
        if (!ref) throw new CliError('webhooks rotate needs an endpoint id (see webhooks list)');
        const { endpoint, secret } = await commands.webhooks.rotate(ref);
        printSecret(io, args.json, endpoint, secret);
        return 0;
      }
      default:
        throw new CliError('webhooks: expected add, list, remove or rotate');
    }
  });
}

function printSecret(io: CliIo, json: boolean, endpoint: WebhookEndpoint, secret: string): void {
  if (json) return io.out(JSON.stringify({ ...endpointView(endpoint), secret }));
  printRecord(io, false, endpointView(endpoint));
  io.out('');
  io.out('Signing secret (shown once, it cannot be retrieved later):');
  io.out(secret);
  if (endpoint.previousSecretUntil) io.out(`The previous secret signs beside it until ${endpoint.previousSecretUntil}.`);
}

function endpointView(endpoint: WebhookEndpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    account_id: endpoint.accountId,
    url: endpoint.url,
    events: endpoint.eventTypes.join(','),
    created_at: endpoint.createdAt,
    previous_secret_until: endpoint.previousSecretUntil,
    removed_at: endpoint.disabledAt,
  };
}

/** A URL or event types the endpoint cannot take, in the flags' words. */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    throw new CliError(Object.values(err.fields).flat().join('\n'));
  }
}
