// GET /metrics: Prometheus text format, for the operator. It names upstream addresses, so
// it answers loopback clients (a local scraper, the admin CLI) or a bearer token the
// operator configured, and nobody else.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { readSecretEnv, ConfigError } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { ForbiddenError } from '../../errors.js';
import type { Metrics } from '../../observability/metrics.js';

export function metricsRoute(app: FastifyInstance, config: Config, metrics: Metrics): void {
  if (!config.metrics.enabled) return;
  const tokenEnv = config.metrics.token_env;
  const token = tokenEnv === undefined ? undefined : readSecretEnv(tokenEnv);
  if (tokenEnv !== undefined && !token) throw new ConfigError([`metrics.token_env: ${tokenEnv} is not set`]);
  app.get('/metrics', async (request, reply) => {
    if (!mayScrape(request, token)) throw new ForbiddenError('metrics_not_allowed');
    reply.header('cache-control', 'no-store').type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}

function mayScrape(request: FastifyRequest, token: string | undefined): boolean {
  if (token !== undefined) {
    const presented = Buffer.from(request.headers.authorization ?? '');
    const expected = Buffer.from(`Bearer ${token}`);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  }
  return isLoopback(request.ip);
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.');
}
