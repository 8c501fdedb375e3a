// Spec 5.4: keys travel only over HTTPS. lmgate serves TLS itself, or sits behind a proxy
// it is told to trust; plain HTTP is for loopback unless the operator opts in knowingly.
import { isIP } from 'node:net';
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
