// lmgate keys create | list | revoke
import { maskedKey } from '../auth/keys.js';
import { Commands } from '../commands/commands.js';
import type { Config } from '../config/schema.js';
import type { ApiKeyRecord } from '../store/store.js';
import { CliError, cliActor, withStore, type CliIo } from './context.js';
import { requireAccount, stringFlag, type ParsedCommand } from './args.js';
import { printRecord, printTable } from './output.js';

export async function keysCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, ref] = args.positionals;
  return withStore(config, async (store) => {
    switch (action) {
      case 'create': {
        const account = await requireAccount(store, ref);
        const { record, secret } = await new Commands(store).createKey(account.id, stringFlag(args, 'name') ?? 'default', cliActor());
        if (args.json) io.out(JSON.stringify({ ...keyView(record), secret }));
        else {
          printRecord(io, false, keyView(record));
          io.out('');
          io.out('Secret (shown once, it cannot be retrieved later):');
          io.out(secret);
        }
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
        printRecord(io, args.json, keyView(await new Commands(store).revokeKey(ref, undefined, cliActor())));
        return 0;
      }
      default:
        throw new CliError('keys: expected create, list or revoke');
    }
  });
}

function keyView(key: ApiKeyRecord): Record<string, unknown> {
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
  };
}
