// Each upstream deployment's health as this process sees it (circuit state, in-flight
// requests, outcomes, mean time to first byte), read from the Prometheus text of /metrics:
// what `lmgate upstreams` prints and the admin API's /upstreams returns, from one reader.

export interface DeploymentRow {
  model: string;
  deployment: string;
  upstream: string;
  state: string;
  in_flight: number;
  ok: number;
  rejected: number;
  failed: number;
  aborted: number;
  mean_first_byte_ms: number | null;
}

/** Outcomes that count against a deployment (see lmgate_upstream_attempts_total's help). */
const FAILED = new Set(['unreachable', 'busy', 'bad_answer', 'timeout']);

/** Rows per (model, deployment) from Prometheus text, for the lmgate_upstream_* families. */
export function deploymentRows(text: string): DeploymentRow[] {
  const rows = new Map<string, DeploymentRow>();
  const sums = new Map<string, { sum: number; count: number }>();
  for (const line of text.split('\n')) {
    const match = /^(lmgate_upstream_[a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, labelText, valueText] = match as unknown as [string, string, string, string];
    const labels = parseLabels(labelText);
    const value = Number(valueText);
    const key = `${labels.model}\u0000${labels.deployment}`;
    let row = rows.get(key);
    if (row === undefined) {
      row = { model: labels.model ?? '', deployment: labels.deployment ?? '', upstream: labels.upstream ?? '', state: '-', in_flight: 0, ok: 0, rejected: 0, failed: 0, aborted: 0, mean_first_byte_ms: null };
      rows.set(key, row);
    }
    if (name === 'lmgate_upstream_in_flight') row.in_flight = value;
    else if (name === 'lmgate_upstream_circuit_state' && value === 1) row.state = labels.state ?? '-';
    else if (name === 'lmgate_upstream_attempts_total') {
      const outcome = labels.outcome ?? '';
      if (outcome === 'ok') row.ok += value;
      else if (outcome === 'rejected') row.rejected += value;
      else if (outcome === 'aborted') row.aborted += value;
      else if (FAILED.has(outcome)) row.failed += value;
    } else if (name === 'lmgate_upstream_first_byte_seconds_sum' || name === 'lmgate_upstream_first_byte_seconds_count') {
      const totals = sums.get(key) ?? { sum: 0, count: 0 };
      if (name.endsWith('_sum')) totals.sum = value;
      else totals.count = value;
      sums.set(key, totals);
    }
  }
  for (const [key, { sum, count }] of sums) {
    const row = rows.get(key);
    if (row && count > 0) row.mean_first_byte_ms = Math.round((sum / count) * 10_000) / 10;
  }
  return [...rows.values()];
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
  }
  return labels;
}
