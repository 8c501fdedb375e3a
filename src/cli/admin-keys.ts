// lmgate admin-keys create --scope S[,S...] [--name N] | list | revoke ID
//
// Keys of the admin API (/api/admin/v1). A key may do what its scopes allow: read (every
// GET), accounts, credits, keys. The secret is printed once; only its hash is stored.
import { ADMIN_SCOPES, isAdminScope } from '../auth/admin-key.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import { Refusal } from '../errors.js';
import type { AdminKeyRecord, AdminScope } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { stringFlag, type ParsedCommand } from './args.js';
import { printRecord, printTable } from './output.js';

export async function adminKeysCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref, ...rest] = args.positionals;
  if (rest.length > 0) throw new CliError(`admin-keys ${action}: unexpected ${JSON.stringify(rest[0])}`);
  switch (action) {
    case 'create': {
      if (ref !== undefined) throw new CliError(`admin-keys create: unexpected ${JSON.stringify(ref)}`);
      const scopes = parseScopes(stringFlag(args, 'scope'));
      const name = stringFlag(args, 'name')?.trim() || 'admin';
      return withStore(config, async (store) => {
        const { record, secret } = await new Commands(store).adminKeys.create(name, scopes, cliActor());
        if (args.json) io.out(JSON.stringify({ ...adminKeyView(record), secret }));
        else {
          printRecord(io, false, adminKeyView(record));
          io.out('');
          io.out('Secret (shown once, it cannot be retrieved later):');
          io.out(secret);
        }
        return 0;
      });
    }
    case 'list':
      return withStore(config, async (store) => {
        printTable(io, args.json, (await store.listAdminKeys()).map(adminKeyView), ['id', 'name', 'key', 'scopes', 'status', 'created_at', 'last_used_at']);
        return 0;
      });
    case 'revoke': {
      if (!ref) throw new CliError('admin-keys revoke needs a key id (see admin-keys list)');
      return withStore(config, async (store) => {
        const record = await new Commands(store).adminKeys.revoke(ref, cliActor()).catch((err: unknown) => {
          if (err instanceof Refusal) throw new CliError(`no admin key ${JSON.stringify(ref)}`);
          throw err;
        });
        printRecord(io, args.json, adminKeyView(record));
        return 0;
      });
    }
    default:
      throw new CliError('admin-keys: expected create, list or revoke');
  }
}

function parseScopes(text: string | undefined): AdminScope[] {
  const given = (text ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (given.length === 0) throw new CliError(`admin-keys create needs --scope, one or more of ${ADMIN_SCOPES.join(', ')} separated by commas`);
  const unknown = given.filter((s) => !isAdminScope(s));
  if (unknown.length > 0) throw new CliError(`--scope: no scope ${unknown.map((s) => JSON.stringify(s)).join(', ')} (scopes: ${ADMIN_SCOPES.join(', ')})`);
  // In the canonical order, once each.
  return ADMIN_SCOPES.filter((scope) => given.includes(scope));
}

function adminKeyView(key: AdminKeyRecord): Record<string, unknown> {
  return {
    id: key.id,
    name: key.name,
    key: `${key.prefix}…${key.lastFour}`,
    scopes: key.scopes.join(','),
    status: key.revokedAt ? 'revoked' : 'active',
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
  };
}
