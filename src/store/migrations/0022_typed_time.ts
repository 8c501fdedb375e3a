// Typed time on PostgreSQL: every moment still stored as ISO 8601 text becomes a
// timestamptz, as usage_records and refused_requests did in 0020, so a range is compared as
// time, a day is cut in SQL, and a value that is not a moment is refused on write. The
// driver reads a timestamptz back as the same ISO 8601 text (dialects/postgres.ts), so
// nothing above the store changes. SQLite keeps the text: it sorts and range-scans as time.
//
// One ALTER TABLE per table: PostgreSQL rewrites the table and rebuilds its indexes once.
// Kysely runs PostgreSQL's pending migrations in one transaction, so filling a new column
// in batches would still commit once, writing every row twice and bloating the table and
// its indexes; the rewrite writes each row once (44 s for 10 million ledger entries on 2
// cores). A value that is not a moment fails the migration, which then changes nothing.
import { sql, type Kysely } from 'kysely';
import { isPostgres, type MigrationDb } from './dialect.js';

// The moments of each table as of this migration (a migration never follows later code).
// Not moments: api_keys.credit_limit_period ('total' or 'month'), budget_alerts.period
// (a month), stripe_events.created_at and stripe_customers.state_at (Stripe's Unix seconds).
const MOMENTS: Record<string, readonly string[]> = {
  accounts: ['created_at', 'updated_at', 'comp_until', 'subscription_period_end', 'subscription_grace_until'],
  account_passwords: ['updated_at'],
  account_tokens: ['created_at', 'expires_at', 'used_at'],
  admin_keys: ['created_at', 'last_used_at', 'revoked_at'],
  alert_settings: ['updated_at'],
  api_keys: ['created_at', 'expires_at', 'last_used_at', 'revoked_at'],
  audit_log: ['created_at'],
  auto_recharges: ['updated_at'],
  budget_alerts: ['fired_at'],
  change_events: ['created_at'],
  ledger_entries: ['created_at'],
  oidc_identities: ['created_at', 'last_sign_in_at'],
  org_budgets: ['updated_at'],
  org_invitations: ['created_at', 'expires_at', 'accepted_at', 'declined_at', 'revoked_at'],
  org_members: ['created_at'],
  payments: ['created_at', 'updated_at'],
  pending_sign_ups: ['created_at', 'expires_at', 'used_at'],
  redemption_codes: ['created_at', 'expires_at', 'redeemed_at', 'disabled_at'],
  sessions: ['created_at', 'expires_at', 'last_seen_at'],
  stripe_customers: ['created_at'],
  stripe_events: ['processed_at'],
  webhook_attempts: ['attempted_at'],
  webhook_deliveries: ['created_at', 'next_attempt_at', 'lease_until', 'delivered_at'],
  webhook_endpoints: ['created_at', 'disabled_at', 'previous_secret_until'],
  webhook_events: ['created_at'],
};

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const [table, columns] of Object.entries(MOMENTS)) {
    const retyped = columns.map((column) => sql`alter column ${sql.ref(column)} type timestamptz using ${sql.ref(column)}::timestamptz`);
    await sql`alter table ${sql.table(table)} ${sql.join(retyped)}`.execute(db);
  }
}
