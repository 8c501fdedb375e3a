// Admin keys: made with their scopes, and revoked.
import { generateAdminKey } from '../auth/admin-key.js';
import { Refusal } from '../errors.js';
import type { Actor, AdminKeyRecord, AdminScope } from '../store/store.js';
import { audit, CommandSet } from './unit-of-work.js';

export interface CreatedAdminKey {
  record: AdminKeyRecord;
  /** Shown once, like a customer key's. */
  secret: string;
}

export class AdminKeyCommands extends CommandSet {
  async create(name: string, scopes: AdminScope[], actor: Actor): Promise<CreatedAdminKey> {
    const key = generateAdminKey();
    return this.store.transaction(async (tx) => {
      const record = await tx.createAdminKey({ name, scopes, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour });
      await audit(tx, actor, { action: 'admin_key.create', target: { kind: 'admin_key', id: record.id }, before: null, after: { name, scopes } });
      return { record, secret: key.secret };
    });
  }
  /** Admin keys are read from the store on every use: a revocation holds on every instance at once. */
  async revoke(keyId: string, actor: Actor): Promise<AdminKeyRecord> {
    return this.store.transaction(async (tx) => {
      const before = await tx.findAdminKeyById(keyId);
      const after = before && (await tx.revokeAdminKey(keyId));
      if (!before || !after) throw new Refusal('key_not_found');
      await audit(tx, actor, { action: 'admin_key.revoke', target: { kind: 'admin_key', id: keyId }, before: { revoked_at: before.revokedAt }, after: { revoked_at: after.revokedAt } });
      return after;
    });
  }
}
