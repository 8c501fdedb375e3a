// lmgate usage export | verify: the raw usage records of a period streamed to stdout (CSV
// or JSON lines) in constant memory, and the check that the daily rollups, the raw records
// and the ledger agree.
import { USAGE_EXPORT_CSV_HEADER, usageExportCsvRow } from '../billing/usage-csv.js';
import type { Config } from '../config/schema.js';
import { toUsageRow } from '../store/usage-rows.js';
import type { Store, TimeRange, UsageRecord } from '../store/store.js';
import { requireAccount, requireOrg, stringFlag, type ParsedCommand } from './args.js';
import { CliError, withStore, type CliIo } from './context.js';
import { printTable } from './output.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Records per write to stdout: few enough to keep memory flat, enough not to write per row. */
const ROWS_PER_WRITE = 1_000;
const FORMATS = ['csv', 'jsonl'] as const;
type Format = (typeof FORMATS)[number];

export async function usageCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const [action, extra] = args.positionals;
  if (extra !== undefined) throw new CliError(`usage ${action}: unexpected ${JSON.stringify(extra)}`);
  if (action !== 'export' && action !== 'verify') throw new CliError('usage: expected export or verify');
  // Refused before the store is opened: a typo in a date costs no connection.
  const range = parsePeriod(stringFlag(args, 'from'), stringFlag(args, 'to'));
  if (action === 'verify') return withStore(config, (store) => verify(store, range, args, io));
  const format = parseFormat(stringFlag(args, 'format') ?? (args.json ? 'jsonl' : 'csv'));
  const accountRef = stringFlag(args, 'account');
  const orgRef = stringFlag(args, 'org');
  if (accountRef !== undefined && orgRef !== undefined) throw new CliError('usage export: give --account or --org, not both');
  return withStore(config, async (store) => {
    const owner = orgRef !== undefined ? await requireOrg(store, orgRef) : accountRef !== undefined ? await requireAccount(store, accountRef) : undefined;
    try {
      await exportRecords(store, store.exportUsage({ ...range, accountId: owner?.id }), format, io);
    } catch (err) {
      // The reader took what it wanted and left (`| head`): nothing went wrong here.
      if ((err as { code?: unknown } | null)?.code !== 'EPIPE') throw err;
    }
    return 0;
  });
}

async function exportRecords(store: Pick<Store, 'listKeys'>, records: AsyncIterable<UsageRecord>, format: Format, io: CliIo): Promise<void> {
  // Chunks always end with a line end; `out` adds one, so the bytes are the same either way.
  const write = io.write ?? (async (chunk: string) => io.out(chunk.slice(0, -1)));
  const keyName = keyNames(store);
  // CRLF as RFC 4180 and the dashboard's download have it; JSON lines end with LF.
  if (format === 'csv') await write(`${USAGE_EXPORT_CSV_HEADER}\r\n`);
  let chunk = '';
  let rows = 0;
  for await (const record of records) {
    const name = await keyName(record);
    chunk += format === 'csv' ? `${usageExportCsvRow(record, name)}\r\n` : `${JSON.stringify(usageJson(record, name))}\n`;
    if (++rows === ROWS_PER_WRITE) {
      await write(chunk);
      chunk = '';
      rows = 0;
    }
  }
  if (chunk !== '') await write(chunk);
}

/**
 * Each key's name, looked up once per account the first time one of its records comes by:
 * memory grows with the keys, never with the records. '' for a key no longer in the store.
 */
function keyNames(store: Pick<Store, 'listKeys'>): (record: UsageRecord) => Promise<string> {
  const byAccount = new Map<string, Map<string, string>>();
  return async (record) => {
    let names = byAccount.get(record.accountId);
    if (names === undefined) {
      names = new Map((await store.listKeys(record.accountId)).map((key) => [key.id, key.name]));
      byAccount.set(record.accountId, names);
    }
    return names.get(record.keyId) ?? '';
  };
}

/** A record as one JSON line: its stored columns (the snake_case of the CLI's other --json output), its key's name. */
function usageJson(record: UsageRecord, keyName: string): Record<string, unknown> {
  return { ...toUsageRow(record), streamed: record.streamed, key_name: keyName };
}

async function verify(store: Store, range: TimeRange, args: ParsedCommand, io: CliIo): Promise<number> {
  const differences = await store.verifyUsage(range);
  const period = `${range.fromIso}..${range.untilIso}`;
  if (args.json) io.out(JSON.stringify(differences));
  else if (differences.length === 0) io.out(`usage verify: rollups, records and ledger agree for ${period}`);
  else {
    const rows = differences.map((difference) => ({ ...difference, account: difference.accountId }));
    printTable(io, false, rows, ['kind', 'day', 'account', 'group', 'field', 'expected', 'actual']);
    io.err(`usage verify: ${differences.length} difference${differences.length === 1 ? '' : 's'} in ${period}`);
  }
  return differences.length === 0 ? 0 : 1;
}

function parseFormat(value: string): Format {
  const format = FORMATS.find((known) => known === value);
  if (format === undefined) throw new CliError(`--format: expected ${FORMATS.join(' or ')}, not ${JSON.stringify(value)}`);
  return format;
}

/** --from and --to as a half-open range: a day `--to` includes that whole day (UTC); a timestamp ends just before it. */
export function parsePeriod(from: string | undefined, to: string | undefined): TimeRange {
  if (from === undefined || to === undefined) throw new CliError('give the period with --from DATE --to DATE (YYYY-MM-DD, UTC, --to included; or ISO 8601 timestamps)');
  const fromMs = parseInstant(from, '--from', false);
  const untilMs = parseInstant(to, '--to', true);
  if (fromMs >= untilMs) throw new CliError(`--from ${from} is not before --to ${to}`);
  // Normalised to the stored text's form: on SQLite created_at is compared as text.
  return { fromIso: new Date(fromMs).toISOString(), untilIso: new Date(untilMs).toISOString() };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
// A zone is required: a bare local time would mean something else on every operator's machine.
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseInstant(value: string, option: string, isEnd: boolean): number {
  const day = DAY.test(value) ? value : TIMESTAMP.exec(value)?.[1];
  const dayMs = day === undefined ? Number.NaN : Date.parse(`${day}T00:00:00.000Z`);
  const ms = value === day ? dayMs : Date.parse(value);
  // Date.parse rolls 2025-02-30 over to March; a real day reads back the same.
  if (Number.isNaN(dayMs) || Number.isNaN(ms) || new Date(dayMs).toISOString().slice(0, 10) !== day) {
    throw new CliError(`${option}: ${JSON.stringify(value)} is not a date (YYYY-MM-DD, UTC) or an ISO 8601 timestamp with a zone`);
  }
  return isEnd && value === day ? ms + DAY_MS : ms;
}
