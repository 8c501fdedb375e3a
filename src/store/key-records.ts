// API keys as the Store port holds them (store.ts re-exports them): the record, its own
// controls, and what creating or editing one writes.

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  /** `leaked`: reported found in public, and revoked for that. */
  revokedReason: 'leaked' | null;
  leakUrl: string | null;
  /** An organisation's key: the member who made it (it outlives their membership); null otherwise. */
  memberId: string | null;
  controls: KeyControls;
}

/** A key's own limits within its account's (auth/key-controls.ts enforces them); each null when unset. */
export interface KeyControls {
  /** When the key stops working (ISO 8601). */
  expiresAt: string | null;
  /** Glob patterns, like a tier's `models`, of the models it may call. */
  allowedModels: string[] | null;
  /** CIDR ranges (IPv4 or IPv6) its requests may come from. */
  allowedIps: string[] | null;
  /** Its own requests per minute, within its tier's. */
  rpm: number | null;
  /** What it may spend, within its account's balance (billing/key-credit.ts). */
  creditLimit: KeyCreditLimit | null;
}

/** At most `amountMicros` charged to the key in all (`total`) or in each calendar month, UTC (`month`). */
export interface KeyCreditLimit {
  amountMicros: number;
  period: CreditPeriod;
}

export type CreditPeriod = 'total' | 'month';

/** What an edit of a key changes: only the fields given. */
export interface KeyUpdate {
  name?: string;
  controls?: Partial<KeyControls>;
}

export interface NewApiKey {
  accountId: string;
  name: string;
  keyHash: string;
  prefix: string;
  lastFour: string;
  controls?: KeyControls;
  /** In an organisation: the member making it. */
  memberId?: string | null;
}
