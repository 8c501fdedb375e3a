// Spec 5.4: keys travel only over HTTPS. lmgate serves TLS itself, or sits behind a proxy
// it is told to trust; plain HTTP is for loopback unless the operator opts in knowingly.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';

export class InsecureListenError extends Error {}

const LOOPBACK_NAMES = new Set(['localhost', '::1', '0:0:0:0:0:0:0:1']);

export function isLoopbackHost(host: string): boolean {
  if (LOOPBACK_NAMES.has(host)) return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

export function assertSecureTransport(config: Config): void {
  const { host, tls, trust_proxy, allow_plain_http } = config.server;
  if (tls || isLoopbackHost(host) || allow_plain_http || trust_proxy !== false) return;
  throw new InsecureListenError(
    `refusing to serve plain HTTP on ${host}: API keys must not cross a network unencrypted. ` +
      'Set server.tls (cert and key), or server.trust_proxy when a TLS-terminating proxy sits in front, ' +
      'or server.allow_plain_http: true to accept the risk.',
  );
}

/** The certificate and key of `server.tls`, read; a file that cannot be read is a ConfigError naming its field. */
export function readTls(config: Config): { cert: Buffer; key: Buffer } | undefined {
  const tls = config.server.tls;
  if (!tls) return undefined;
  const read = (field: 'cert' | 'key'): Buffer => {
    try {
      return readFileSync(tls[field]);
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ConfigError([`server.tls.${field}: cannot read ${tls[field]} (${reason})`]);
    }
  };
  return { cert: read('cert'), key: read('key') };
}
