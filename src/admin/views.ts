// How the admin API shows accounts, keys, ledger entries, codes and audit entries: snake_case
// JSON as the CLI's --json prints it, money in integer micro-credits. Each view's TypeBox
// schema serializes the replies and describes them in the OpenAPI document; the JSON types
// themselves are in api-types.ts, where the operator console reads them.
import { Type } from '@sinclair/typebox';
import { Nullable, type JsonOf } from '../http/typebox.js';
import type { Account, ApiKeyRecord, AuditEntry, LedgerEntry, RedemptionCode } from '../store/store.js';
import type * as Json from './api-types.js';

export const AdminAccount = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Nullable(Type.String()),
  status: Type.String({ description: 'active | suspended' }),
  tier: Type.String(),
  served_tier: Type.String({ description: 'the tier its requests are served as: its own, or the default tier when the config no longer has its own' }),
  role: Type.String({ description: 'customer | operator' }),
  subscription_status: Type.String(),
  price_multiplier_ppm: Type.Integer({ description: "every price × this / 1,000,000 for the account, beside its tier's multiplier" }),
  created_at: Type.String(),
  balance_micros: Type.Integer(),
});
export type AdminAccount = JsonOf<typeof AdminAccount, Json.AdminAccount>;

export const AdminKey = Type.Object({
  id: Type.String(),
  account_id: Type.String(),
  name: Type.String(),
  key: Type.String({ description: 'prefix…last four' }),
  status: Type.String({ description: 'active | revoked' }),
  created_at: Type.String(),
  last_used_at: Nullable(Type.String()),
  revoked_at: Nullable(Type.String()),
});
export type AdminKey = JsonOf<typeof AdminKey, Json.AdminKey>;

export const AdminLedgerEntry = Type.Object({
  id: Type.Integer(),
  kind: Type.String(),
  amount_micros: Type.Integer(),
  reason: Nullable(Type.String()),
  reference: Nullable(Type.String()),
  created_at: Type.String(),
});
export type AdminLedgerEntry = JsonOf<typeof AdminLedgerEntry, Json.AdminLedgerEntry>;

export const AdminCode = Type.Object({
  id: Type.String(),
  hint: Nullable(Type.String()),
  amount_micros: Type.Integer(),
  expires_at: Nullable(Type.String()),
  created_at: Type.String(),
  redeemed_by: Nullable(Type.String()),
  redeemed_at: Nullable(Type.String()),
  disabled_at: Nullable(Type.String()),
});
export type AdminCode = JsonOf<typeof AdminCode, Json.AdminCode>;

const AuditValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null(), Type.Array(Type.String())]);
const AuditState = Type.Union([Type.Record(Type.String(), AuditValue), Type.Null()]);

export const AdminAuditEntry = Type.Object({
  id: Type.Integer(),
  actor: Type.Object({ kind: Type.String({ description: 'cli | admin_key | operator' }), id: Type.String() }),
  action: Type.String(),
  target: Type.Object({ kind: Type.String(), id: Type.String() }),
  before: AuditState,
  after: AuditState,
  created_at: Type.String(),
});
export type AdminAuditEntry = JsonOf<typeof AdminAuditEntry, Json.AdminAuditEntry>;

export function adminAccountView(account: Account, balanceMicros: number, servedTier: string): AdminAccount {
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    status: account.status,
    tier: account.tier,
    served_tier: servedTier,
    role: account.role,
    subscription_status: account.subscriptionStatus,
    price_multiplier_ppm: account.priceMultiplierPpm,
    created_at: account.createdAt,
    balance_micros: balanceMicros,
  };
}

export function adminKeyView(key: ApiKeyRecord): AdminKey {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    key: `${key.prefix}…${key.lastFour}`,
    status: key.revokedAt === null ? 'active' : 'revoked',
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
  };
}

export function ledgerEntryView(entry: LedgerEntry): AdminLedgerEntry {
  return { id: entry.id, kind: entry.kind, amount_micros: entry.amountMicros, reason: entry.reason, reference: entry.reference, created_at: entry.createdAt };
}

export function codeView(code: RedemptionCode): AdminCode {
  return {
    id: code.id,
    hint: code.hint,
    amount_micros: code.amountMicros,
    expires_at: code.expiresAt,
    created_at: code.createdAt,
    redeemed_by: code.redeemedBy,
    redeemed_at: code.redeemedAt,
    disabled_at: code.disabledAt,
  };
}

export function auditEntryView(entry: AuditEntry): AdminAuditEntry {
  return { id: entry.id, actor: entry.actor, action: entry.action, target: entry.target, before: entry.before, after: entry.after, created_at: entry.createdAt };
}
