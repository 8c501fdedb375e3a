import type { ApiKeyRecord } from '../store/store.js';

/** How keys are shown after creation: `sk-lmg-AbCd…wxyz`. */
export function maskedKey(record: ApiKeyRecord): string {
  return `${record.prefix}…${record.lastFour}`;
}
