// `lmgate upstreams [--url URL]`: each upstream deployment's health as a running instance
// sees it, read from its /metrics (each instance keeps its own counts and circuits).
import type { Config } from '../config/schema.js';
import { readSecretEnv } from '../config/load.js';
import type { ParsedCommand } from './args.js';
import { deploymentRows } from '../observability/upstream-health.js';
import { CliError, type CliIo } from './context.js';
import { printTable } from './output.js';

const COLUMNS = ['model', 'deployment', 'upstream', 'state', 'in_flight', 'ok', 'rejected', 'failed', 'aborted', 'mean_first_byte_ms'];

export async function upstreamsCommand(config: Config, args: ParsedCommand, io: CliIo): Promise<number> {
  const url = typeof args.flags.url === 'string' ? metricsUrlAt(args.flags.url) : metricsUrl(config);
  const token = config.metrics.token_env ? readSecretEnv(config.metrics.token_env) : undefined;
  let text: string;
  try {
    const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (!res.ok) throw new CliError(`${url} answered ${res.status}`);
    text = await res.text();
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`cannot read ${url} (is lmgate running there? --url names another address): ${(err as Error).message}`);
  }
  const rows = deploymentRows(text);
  if (!args.json && rows.length === 0) io.out('no upstream deployments configured');
  else printTable(io, args.json, rows as unknown as Record<string, unknown>[], COLUMNS);
  return 0;
}

/** `--url` names the server (`http://10.0.0.7:8080`) or its metrics (`.../metrics`). */
function metricsUrlAt(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`--url: ${JSON.stringify(text)} is not a URL (http://HOST:PORT)`);
  }
  if (!url.pathname.endsWith('/metrics')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/metrics`;
  return url.href;
}

/** Where this config's server listens, as a client on the same machine reaches it. */
function metricsUrl(config: Config): string {
  const { host, port, tls } = config.server;
  const local = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${local}:${port}/metrics`;
}
