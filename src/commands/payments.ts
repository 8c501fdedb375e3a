// Payments: a payment provider's event, recorded with its effects in one unit of work.
import type { Store } from '../store/store.js';
import { CommandSet } from './unit-of-work.js';

export class PaymentCommands extends CommandSet {
  /** `write` records the event and applies it; the caches follow what it changed. */
  apply<T>(write: (tx: Store) => Promise<T>): Promise<T> {
    return this.commit(write);
  }
}
