// Every migration, listed explicitly so a build can never miss one. Never edit a merged one.
import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_ledger_and_usage.js';
import * as m0003 from './0003_dashboard.js';
import * as m0004 from './0004_balance_version.js';
import * as m0005 from './0005_payments.js';
import * as m0006 from './0006_code_hint.js';
import * as m0007 from './0007_key_leaks.js';
import * as m0008 from './0008_refused_requests.js';
import * as m0009 from './0009_admin.js';
import * as m0010 from './0010_account_tokens.js';
import * as m0011 from './0011_key_controls.js';
import * as m0012 from './0012_key_credit_limit.js';
import * as m0013 from './0013_usage_kinds.js';
import * as m0014 from './0014_comp_plans.js';
import * as m0015 from './0015_organisations.js';
import * as m0016 from './0016_webhooks.js';
import * as m0017 from './0017_oidc_identities.js';
import * as m0018 from './0018_alerts.js';
import * as m0019 from './0019_org_invitations.js';
import * as m0020 from './0020_usage_scale.js';
import * as m0021 from './0021_usage_operator_rollups.js';
import * as m0022 from './0022_typed_time.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_ledger_and_usage': m0002,
  '0003_dashboard': m0003,
  '0004_balance_version': m0004,
  '0005_payments': m0005,
  '0006_code_hint': m0006,
  '0007_key_leaks': m0007,
  '0008_refused_requests': m0008,
  '0009_admin': m0009,
  '0010_account_tokens': m0010,
  '0011_key_controls': m0011,
  '0012_key_credit_limit': m0012,
  '0013_usage_kinds': m0013,
  '0014_comp_plans': m0014,
  '0015_organisations': m0015,
  '0016_webhooks': m0016,
  '0017_oidc_identities': m0017,
  '0018_alerts': m0018,
  '0019_org_invitations': m0019,
  '0020_usage_scale': m0020,
  '0021_usage_operator_rollups': m0021,
  '0022_typed_time': m0022,
};

/** In the order they apply. */
export const MIGRATION_NAMES = Object.keys(MIGRATIONS).sort();

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
