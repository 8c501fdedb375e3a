// What every command shares: the store and this process's caches; a unit of work (one
// transaction, then this process's caches follow the changes it recorded, and the other
// instances are told); and the audit row of an admin action.
import { NO_LOCAL_CACHES, type LocalCaches } from '../cluster/local-caches.js';
import type { Actor, NewAuditEntry, Store } from '../store/store.js';

export abstract class CommandSet {
  constructor(
    protected readonly store: Store,
    protected readonly caches: LocalCaches = NO_LOCAL_CACHES,
  ) {}

  /**
   * One unit of work: `write` in one transaction; once it committed, every change it
   * recorded is applied to this process's caches and announced to the other instances.
   */
  protected async commit<T>(write: (tx: Store) => Promise<T>): Promise<T> {
    const { result, changes } = await this.store.unitOfWork(write);
    for (const change of changes) await this.caches.changed(change);
    return result;
  }
}

/** The audit row of an admin action, in its transaction; a customer's own action (no actor) has none. */
export async function audit(tx: Store, actor: Actor | undefined, entry: Omit<NewAuditEntry, 'actor'>): Promise<void> {
  if (actor) await tx.appendAudit({ actor, ...entry });
}
