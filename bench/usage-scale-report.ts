// The tables `npm run bench:usage-scale` prints: one per size, and, for two sizes or more,
// each figure drawn out to a larger size along the power law through the two largest.

/** One line of the results: what, the figure as people read it, and its target when it has one. */
export interface Row {
  measure: string;
  value: string;
  target?: string;
  met?: boolean;
  /** The figure as a number, for the trend across sizes, in `unit`. */
  number?: number;
  unit?: string;
}

export function printResults(records: number, accounts: number, rows: Row[]): void {
  console.log(`\n## Usage data at scale: ${records.toLocaleString('en')} records, ${accounts.toLocaleString('en')} accounts, PostgreSQL (${new Date().toISOString().slice(0, 16)}Z)\n`);
  console.log('| Measure | Figure | Target |');
  console.log('|---|---|---|');
  for (const row of rows) {
    const target = row.target === undefined ? '' : `${row.target} ${row.met ? 'met' : 'MISSED'}`;
    console.log(`| ${row.measure} | ${row.value} | ${target} |`);
  }
}

/**
 * Each figure drawn out as a power of the record count through the two largest sizes,
 * v = a·N^b: b near 0 is a figure that does not grow with the records (a read of rollups
 * over fixed days, a partition drop), b near 1 one that grows with them (sizes on disk, a
 * scan). Two sizes fit any such curve exactly, so noise in either moves b: run the sizes on
 * a quiet machine, a decade apart.
 */
export function printTrend(results: { records: number; rows: Row[] }[], toRecords: number): void {
  const sorted = [...results].sort((a, b) => a.records - b.records);
  const [lower, upper] = sorted.slice(-2) as [(typeof sorted)[number], (typeof sorted)[number]];
  console.log(`\n## Trend to ${toRecords.toLocaleString('en')} records (v = a·N^b through the two largest sizes)\n`);
  console.log(`| Measure | ${sorted.map((r) => r.records.toLocaleString('en')).join(' | ')} | b | ${toRecords.toLocaleString('en')} (drawn out) |`);
  console.log(`|---|${sorted.map(() => '---:|').join('')}---:|---:|`);
  for (const row of upper.rows) {
    if (row.number === undefined) continue;
    const figures = sorted.map((result) => result.rows.find((other) => other.measure === row.measure)?.number);
    const below = lower.rows.find((other) => other.measure === row.measure)?.number;
    const exponent = below !== undefined && below > 0 && row.number > 0 ? Math.log(row.number / below) / Math.log(upper.records / lower.records) : undefined;
    const drawn = exponent === undefined ? undefined : row.number * (toRecords / upper.records) ** exponent;
    const show = (n: number | undefined): string => (n === undefined ? '' : `${n.toFixed(n < 10 ? 2 : 0)}`);
    console.log(`| ${row.measure} (${row.unit ?? ''}) | ${figures.map(show).join(' | ')} | ${exponent === undefined ? '' : exponent.toFixed(2)} | ${show(drawn)} |`);
  }
}
