// lmgate audit [--limit K]: the newest admin actions (CLI, admin API, console).
import type { Config } from '../config/schema.js';
import type { AuditEntry } from '../store/store.js';
import { CliError, withStore, type CliIo } from './context.js';
import { stringFlag, type ParsedCommand } from './args.js';
import { printTable } from './output.js';

const DEFAULT_LIMIT = 50;

export async function auditCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  if (args.positionals.length > 0) throw new CliError(`audit: unexpected ${JSON.stringify(args.positionals[0])}`);
  const text = stringFlag(args, 'limit');
  const limit = text === undefined ? DEFAULT_LIMIT : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new CliError(`--limit must be a whole number from 1 to 1000 (got ${JSON.stringify(text)})`);
  return withStore(config, async (store) => {
    const rows = (await store.listAudit({ limit })).map(auditView);
    printTable(io, args.json, rows, ['id', 'created_at', 'actor', 'action', 'target', 'before', 'after']);
    return 0;
  });
}

function auditView(entry: AuditEntry): Record<string, unknown> {
  return {
    id: entry.id,
    created_at: entry.createdAt,
    actor: `${entry.actor.kind}:${entry.actor.id}`,
    action: entry.action,
    target: `${entry.target.kind}:${entry.target.id}`,
    before: entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === null ? null : JSON.stringify(entry.after),
  };
}
