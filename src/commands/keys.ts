// API keys: made (the secret shown once), renamed or given other controls, revoked by
// their owner or an operator, and revoked everywhere when found in public.
import { generateApiKey } from '../auth/api-key.js';
import { Refusal } from '../errors.js';
import type { Actor, ApiKeyRecord, AuditState, KeyControls, KeyUpdate } from '../store/store.js';
import { recordWebhookEvent, type WebhookOutbox } from '../webhooks/events.js';
import { audit, CommandSet } from './unit-of-work.js';

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The only time the secret exists outside the client: show it once. */
  secret: string;
}

export class KeyCommands extends CommandSet {
  /** A key of the account; in an organisation, `memberId` names the member who makes it. */
  async create(accountId: string, name: string, controls?: KeyControls, actor?: Actor, memberId: string | null = null): Promise<CreatedKey> {
    const key = generateApiKey();
    return this.store.transaction(async (tx) => {
      const record = await tx.createApiKey({ accountId, name, keyHash: key.hash, prefix: key.prefix, lastFour: key.lastFour, controls, memberId });
      await audit(tx, actor, { action: 'key.create', target: { kind: 'key', id: record.id }, before: null, after: { account_id: accountId, name, member_id: memberId } });
      return { record, secret: key.secret };
    });
  }
  /** Renames a key or changes its controls, everywhere at once; only among `ownerId`'s keys when given. */
  async update(keyId: string, changes: KeyUpdate, ownerId?: string, actor?: Actor): Promise<ApiKeyRecord> {
    const key = await this.store.transaction(async (tx) => {
      const before = actor && (await tx.findKeyById(keyId));
      const after = await tx.updateKey(keyId, ownerId, changes);
      if (!after) throw new Refusal('key_not_found');
      if (before) await audit(tx, actor, { action: 'key.update', target: { kind: 'key', id: keyId }, before: keyState(before), after: keyState(after) });
      return after;
    });
    this.caches.keyChanged(key);
    return key;
  }
  /** Revokes a key by id (the operator), or only among `accountId`'s keys (its owner). */
  async revoke(keyId: string, ownerId?: string, actor?: Actor): Promise<ApiKeyRecord> {
    const key = await this.store.transaction(async (tx) => {
      const before = await tx.findKeyById(keyId);
      const after = ownerId === undefined ? before && (await tx.revokeKey(keyId)) : await tx.revokeAccountKey(ownerId, keyId);
      if (!before || !after) throw new Refusal('key_not_found');
      // Revoking is idempotent: only the revocation that happened is told.
      if (before.revokedAt === null && after.revokedAt !== null) await recordKeyRevoked(tx, after, ownerId === undefined ? 'operator' : 'owner');
      await audit(tx, actor, {
        action: 'key.revoke',
        target: { kind: 'key', id: keyId },
        before: { account_id: before.accountId, revoked_at: before.revokedAt },
        after: { account_id: after.accountId, revoked_at: after.revokedAt },
      });
      return after;
    });
    this.caches.keyRevoked(key);
    return key;
  }
  /** A key found in public: revoked everywhere at once. Undefined when no active key has this hash. */
  async revokeLeaked(keyHash: string, leakUrl: string | null): Promise<ApiKeyRecord | undefined> {
    const key = await this.store.transaction(async (tx) => {
      const revoked = await tx.revokeLeakedKey(keyHash, leakUrl);
      if (revoked) await recordKeyRevoked(tx, revoked, 'leaked');
      return revoked;
    });
    if (key) this.caches.keyRevoked(key);
    return key;
  }
}

/** What the audit log keeps of a key's name and controls. */
function keyState(key: ApiKeyRecord): AuditState {
  const { expiresAt, allowedModels, allowedIps, rpm, creditLimit } = key.controls;
  return {
    name: key.name,
    expires_at: expiresAt,
    allowed_models: allowedModels,
    allowed_ips: allowedIps,
    rpm,
    credit_limit_micros: creditLimit?.amountMicros ?? null,
    credit_limit_period: creditLimit?.period ?? null,
  };
}

/** The account's webhook endpoints hear of the revocation, in its transaction. */
function recordKeyRevoked(tx: WebhookOutbox, key: ApiKeyRecord, reason: 'owner' | 'operator' | 'leaked'): Promise<unknown> {
  return recordWebhookEvent(tx, {
    accountId: key.accountId,
    type: 'key.revoked',
    data: { account_id: key.accountId, key_id: key.id, name: key.name, prefix: key.prefix, last_four: key.lastFour, reason, revoked_at: key.revokedAt ?? new Date().toISOString() },
  });
}
