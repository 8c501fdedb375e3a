// API keys: stored by the SHA-256 of the secret, revoked in place (never deleted).
import type { Selectable } from 'kysely';
import { checkMicros } from '../money.js';
import { recordChange } from './changes.js';
import type { Dialect } from './dialect.js';
import { newId } from '../ids.js';
import { now, type Db } from './sql.js';
import { NotFoundInStoreError, type ApiKeyRecord, type KeyControls, type KeyUpdate, type NewApiKey } from './store.js';
import type { ApiKeysTable } from './tables.js';

export async function createApiKey(db: Db, input: NewApiKey): Promise<ApiKeyRecord> {
  const row: ApiKeysTable = {
    id: newId('key'),
    account_id: input.accountId,
    name: input.name,
    key_hash: input.keyHash,
    prefix: input.prefix,
    last_four: input.lastFour,
    created_at: now(),
    last_used_at: null,
    revoked_at: null,
    revoked_reason: null,
    leak_url: null,
    expires_at: null,
    allowed_models: null,
    allowed_ips: null,
    rpm: null,
    credit_limit_micros: null,
    credit_limit_period: null,
    member_id: input.memberId ?? null,
    ...controlColumns(input.controls ?? {}),
  };
  await db.insertInto('api_keys').values(row).execute();
  return toApiKey(row);
}

export async function findKeyByHash(db: Db, keyHash: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  return row && toApiKey(row);
}

export async function findKeyById(db: Db, keyId: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  return row && toApiKey(row);
}

export async function listKeys(db: Db, accountId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toApiKey);
}

/** In the caller's transaction. */
export async function revokeKey(trx: Db, dialect: Dialect, keyId: string): Promise<ApiKeyRecord> {
  await trx.updateTable('api_keys').set({ revoked_at: now() }).where('id', '=', keyId).where('revoked_at', 'is', null).execute();
  const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  if (!row) throw new NotFoundInStoreError('key', keyId);
  await recordChange(trx, dialect, 'key', keyId);
  return toApiKey(row);
}

/** In the caller's transaction. */
export async function revokeAccountKey(trx: Db, dialect: Dialect, accountId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  const revoked = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now() })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
  if (!row) return undefined;
  // Only a key that changed needs other instances to forget it.
  if (revoked.numUpdatedRows > 0n) await recordChange(trx, dialect, 'key', keyId);
  return toApiKey(row);
}

/** In the caller's transaction. */
export async function revokeLeakedKey(trx: Db, dialect: Dialect, keyHash: string, leakUrl: string | null): Promise<ApiKeyRecord | undefined> {
  const row = await trx.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
  if (!row) return undefined;
  const changes = { revoked_at: now(), revoked_reason: 'leaked' as const, leak_url: leakUrl };
  const revoked = await trx.updateTable('api_keys').set(changes).where('id', '=', row.id).where('revoked_at', 'is', null).executeTakeFirst();
  if (revoked.numUpdatedRows === 0n) return undefined;
  await recordChange(trx, dialect, 'key', row.id);
  return toApiKey({ ...row, ...changes });
}

/** In the caller's transaction. */
export async function updateKey(trx: Db, dialect: Dialect, keyId: string, ownerId: string | undefined, changes: KeyUpdate): Promise<ApiKeyRecord | undefined> {
  const set = { ...controlColumns(changes.controls ?? {}), ...(changes.name === undefined ? {} : { name: changes.name }) };
  let update = trx.updateTable('api_keys').set(set).where('id', '=', keyId);
  if (ownerId !== undefined) update = update.where('account_id', '=', ownerId);
  if (Object.keys(set).length > 0 && (await update.executeTakeFirst()).numUpdatedRows === 0n) return undefined;
  let select = trx.selectFrom('api_keys').selectAll().where('id', '=', keyId);
  if (ownerId !== undefined) select = select.where('account_id', '=', ownerId);
  const row = await select.executeTakeFirst();
  if (!row) return undefined;
  await recordChange(trx, dialect, 'key', keyId);
  return toApiKey(row);
}

/** In the caller's transaction. */
export async function touchKeys(trx: Db, lastUsedAtById: ReadonlyMap<string, string>): Promise<void> {
  for (const [id, at] of lastUsedAtById) {
    await trx.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}

function toApiKey(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    keyHash: row.key_hash,
    prefix: row.prefix,
    lastFour: row.last_four,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    revokedReason: row.revoked_reason,
    leakUrl: row.leak_url,
    memberId: row.member_id ?? null,
    controls: {
      expiresAt: row.expires_at,
      allowedModels: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
      allowedIps: row.allowed_ips === null ? null : (JSON.parse(row.allowed_ips) as string[]),
      rpm: row.rpm,
      creditLimit:
        row.credit_limit_micros === null || row.credit_limit_period === null
          ? null
          : { amountMicros: checkMicros(Number(row.credit_limit_micros)), period: row.credit_limit_period },
    },
  };
}

type ControlColumn = 'expires_at' | 'allowed_models' | 'allowed_ips' | 'rpm' | 'credit_limit_micros' | 'credit_limit_period';

/** The columns of the controls given (an absent one is left as it is, a null one cleared). */
function controlColumns(controls: Partial<KeyControls>): Partial<Pick<ApiKeysTable, ControlColumn>> {
  const list = (items: string[] | null) => (items === null ? null : JSON.stringify(items));
  return {
    ...(controls.expiresAt === undefined ? {} : { expires_at: controls.expiresAt }),
    ...(controls.allowedModels === undefined ? {} : { allowed_models: list(controls.allowedModels) }),
    ...(controls.allowedIps === undefined ? {} : { allowed_ips: list(controls.allowedIps) }),
    ...(controls.rpm === undefined ? {} : { rpm: controls.rpm }),
    ...(controls.creditLimit === undefined
      ? {}
      : { credit_limit_micros: controls.creditLimit?.amountMicros ?? null, credit_limit_period: controls.creditLimit?.period ?? null }),
  };
}
