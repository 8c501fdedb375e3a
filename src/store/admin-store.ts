// The store's room for the operator: the audit log, admin keys and the account search's
// terms, part of the Store port (store.ts), in domain words.

/** What an admin key may do; reading needs `read`, each kind of write its own scope. */
export type AdminScope = 'read' | 'accounts' | 'credits' | 'keys';

export interface AdminKeyRecord {
  id: string;
  name: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
  scopes: AdminScope[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export type NewAdminKey = Pick<AdminKeyRecord, 'name' | 'keyHash' | 'prefix' | 'lastFour' | 'scopes'>;

/** Who did an admin action: the CLI (as the OS user), an admin key (its id), an operator (their account id). */
export interface Actor {
  kind: 'cli' | 'admin_key' | 'operator';
  id: string;
}

export type AuditAction =
  | 'account.create'
  | 'account.suspend'
  | 'account.reactivate'
  | 'account.set_tier'
  | 'account.set_price_multiplier'
  | 'account.set_role'
  | 'account.set_password'
  | 'key.create'
  | 'key.update'
  | 'key.revoke'
  | 'credits.grant'
  | 'credits.adjust'
  | 'codes.create'
  | 'code.disable'
  | 'admin_key.create'
  | 'admin_key.revoke'
  | 'org.create'
  | 'org.set_member'
  | 'org.remove_member'
  | 'org.set_budget'
  | 'account.set_alerts'
  | 'org.require_sso';

/** A JSON object as the audit log keeps it (before and after a change). */
export type AuditState = Record<string, string | number | boolean | null | string[]>;

/** One admin action; `before` and `after` hold what changed (money and status changes). */
export interface AuditEntry {
  id: number;
  actor: Actor;
  action: AuditAction;
  target: { kind: 'account' | 'key' | 'code' | 'admin_key'; id: string };
  before: AuditState | null;
  after: AuditState | null;
  createdAt: string;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'createdAt'>;

export interface AuditQuery {
  limit: number;
  /** Entries older than this id (paging back from the newest). */
  beforeId?: number;
  targetId?: string;
  actorId?: string;
}

/** How a page of accounts is ordered; newest first unless said. */
export type AccountSort = 'newest' | 'oldest' | 'email' | 'balance';

export interface AccountQuery {
  /** Part of an email, name or id, any case. */
  search?: string;
  sort?: AccountSort;
  limit: number;
  offset: number;
}

export interface AdminStore {
  appendAudit(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Newest first. */
  listAudit(query: AuditQuery): Promise<AuditEntry[]>;

  createAdminKey(input: NewAdminKey): Promise<AdminKeyRecord>;
  findAdminKeyByHash(keyHash: string): Promise<AdminKeyRecord | undefined>;
  findAdminKeyById(keyId: string): Promise<AdminKeyRecord | undefined>;
  listAdminKeys(): Promise<AdminKeyRecord[]>;
  /** Idempotent; undefined when there is no such key. */
  revokeAdminKey(keyId: string): Promise<AdminKeyRecord | undefined>;
  touchAdminKey(keyId: string, lastUsedAt: string): Promise<void>;
}
