import type { CliIo } from './context.js';

/** One record or list, as JSON with --json, else as aligned `label: value` lines / a table. */
export function printRecord(io: CliIo, json: boolean, record: Record<string, unknown>): void {
  if (json) return io.out(JSON.stringify(record));
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [key, value] of Object.entries(record)) io.out(`${key.padEnd(width)}  ${value ?? '-'}`);
}

export function printTable(io: CliIo, json: boolean, rows: Record<string, unknown>[], columns: string[]): void {
  if (json) return io.out(JSON.stringify(rows));
  const cells = rows.map((row) => columns.map((c) => String(row[c] ?? '-')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  io.out(columns.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  for (const row of cells) io.out(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
}
