// Admin API keys: stored by the SHA-256 of the secret with their scopes, revoked in place.
import type { Selectable } from 'kysely';
import { newId } from '../ids.js';
import { now, type Db } from './sql.js';
import type { AdminKeyRecord, AdminScope, NewAdminKey } from './store.js';
import type { AdminKeysTable } from './tables.js';

export async function createAdminKey(db: Db, input: NewAdminKey): Promise<AdminKeyRecord> {
  const row: AdminKeysTable = {
    id: newId('admkey'),
    name: input.name,
    key_hash: input.keyHash,
    prefix: input.prefix,
    last_four: input.lastFour,
    scopes: input.scopes.join(','),
    created_at: now(),
    last_used_at: null,
    revoked_at: null,
  };
  await db.insertInto('admin_keys').values(row).execute();
  return toAdminKey(row);
}

export async function findAdminKeyByHash(db: Db, keyHash: string): Promise<AdminKeyRecord | undefined> {
  const row = await db.selectFrom('admin_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  return row && toAdminKey(row);
}

export async function findAdminKeyById(db: Db, keyId: string): Promise<AdminKeyRecord | undefined> {
  const row = await db.selectFrom('admin_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  return row && toAdminKey(row);
}

export async function listAdminKeys(db: Db): Promise<AdminKeyRecord[]> {
  const rows = await db.selectFrom('admin_keys').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAdminKey);
}

export async function revokeAdminKey(db: Db, keyId: string): Promise<AdminKeyRecord | undefined> {
  await db.updateTable('admin_keys').set({ revoked_at: now() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
  return findAdminKeyById(db, keyId);
}

export async function touchAdminKey(db: Db, keyId: string, lastUsedAt: string): Promise<void> {
  await db.updateTable('admin_keys').set({ last_used_at: lastUsedAt }).where('id', '=', keyId).execute();
}

function toAdminKey(row: Selectable<AdminKeysTable>): AdminKeyRecord {
  return {
    id: row.id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    lastFour: row.last_four,
    scopes: row.scopes === '' ? [] : (row.scopes.split(',') as AdminScope[]),
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}
