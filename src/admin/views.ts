// How the admin API shows accounts, keys, ledger entries, codes and audit entries: snake_case
// JSON as the CLI's --json prints it, money in integer micro-credits. Each view's TypeBox
// schema serializes the replies and describes them in the OpenAPI document; the JSON types
// themselves are in api-types.ts, where the operator console reads them.
import { Type } from '@sinclair/typebox';
import { standingOf, type Tier } from '../billing/tiers.js';
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
  standing: Type.String({ description: 'whether it may call the API, and why not: ok | complimentary | past_due | suspended | subscription_required | subscription_lapsed' }),
  comp_until: Nullable(Type.String({ description: "a complimentary plan's end (null: none, or no comp)" })),
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
  controls: Type.Object(
    {
      expires_at: Nullable(Type.String()),
      allowed_models: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'glob patterns' }),
      allowed_ips: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'CIDR ranges' }),
      rpm: Nullable(Type.Integer()),
      credit_limit_micros: Nullable(Type.Integer()),
      credit_limit_period: Type.Union([Type.Literal('total'), Type.Literal('month'), Type.Null()]),
    },
    { description: "the key's own limits within its account's; each null when unset" },
  ),
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
  actor: Type.Object({
    kind: Type.String({ description: 'cli | admin_key | operator' }),
    id: Type.String(),
    name: Nullable(Type.String({ description: "an operator's email or an admin key's name; null when unknown" })),
  }),
  action: Type.String(),
  target: Type.Object({
    kind: Type.String({ description: 'account | key | code | admin_key' }),
    id: Type.String(),
    name: Nullable(Type.String({ description: "an account's email, a key's name; null when unknown" })),
  }),
  before: AuditState,
  after: AuditState,
  created_at: Type.String(),
});
export type AdminAuditEntry = JsonOf<typeof AdminAuditEntry, Json.AdminAuditEntry>;

export function adminAccountView(account: Account, balanceMicros: number, servedTier: Tier): AdminAccount {
  const standing = standingOf(account, servedTier);
  return {
    id: account.id,
    email: account.email,
    name: account.name,
    status: account.status,
    tier: account.tier,
    served_tier: servedTier.name,
    role: account.role,
    subscription_status: account.subscriptionStatus,
    price_multiplier_ppm: account.priceMultiplierPpm,
    standing: standing.state,
    comp_until: standing.state === 'complimentary' ? standing.until : null,
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
    controls: {
      expires_at: key.controls.expiresAt,
      allowed_models: key.controls.allowedModels,
      allowed_ips: key.controls.allowedIps,
      rpm: key.controls.rpm,
      credit_limit_micros: key.controls.creditLimit?.amountMicros ?? null,
      credit_limit_period: key.controls.creditLimit?.period ?? null,
    },
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

/** `nameOf` gives the email or name of the ids it knows (audit-names.ts). */
export function auditEntryView(entry: AuditEntry, nameOf: (of: { kind: string; id: string }) => string | null): AdminAuditEntry {
  return {
    id: entry.id,
    actor: { ...entry.actor, name: nameOf(entry.actor) },
    action: entry.action,
    target: { ...entry.target, name: nameOf(entry.target) },
    before: entry.before,
    after: entry.after,
    created_at: entry.createdAt,
  };
}
