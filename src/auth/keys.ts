import type { ApiKeyRecord, Store } from '../store/store.js';
import { generateApiKey } from './api-key.js';

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The only time the secret exists outside the client: show it once. */
  secret: string;
}

export async function createApiKey(store: Store, accountId: string, name: string): Promise<CreatedKey> {
  const key = generateApiKey();
  const record = await store.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
  return { record, secret: key.secret };
}

/** How keys are shown after creation: `sk-lmg-AbCd…wxyz`. */
export function maskedKey(record: ApiKeyRecord): string {
  return `${record.prefix}…${record.lastFour}`;
}
