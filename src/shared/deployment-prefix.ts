// The prefix on every Redis key and channel of a deployment. A Redis database number
// separates keys but not pub/sub channels, so two deployments on one Redis would hear each
// other's change messages: unless redis.key_prefix says otherwise, the prefix is derived
// from the store the deployment uses (its database URL without user or password), which
// every instance of one deployment shares and another deployment does not.
import { createHash } from 'node:crypto';
import type { Config } from '../config/schema.js';

export function deploymentPrefix(config: Pick<Config, 'redis' | 'store'>): string {
  if (config.redis.key_prefix !== undefined) return config.redis.key_prefix;
  const url = config.store.database_url;
  // Shared mode needs PostgreSQL (config/schema.ts), so there is a URL; the bare name is a fallback.
  if (url === undefined) return 'lmgate';
  return `lmgate:${createHash('sha256').update(storeIdentity(url)).digest('hex').slice(0, 12)}`;
}

/** host, port and database: what names the store, without the credentials that reach it. */
export function storeIdentity(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname.toLowerCase()}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return databaseUrl.replace(/\/\/[^@/]*@/, '//');
  }
}
