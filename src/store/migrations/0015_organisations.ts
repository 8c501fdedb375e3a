// Organisations. An organisation is an account row of kind 'org': its balance is the
// wallet, its tier the plan, its Stripe customer the one invoice, so every path that
// charges, pays or reports an account serves it unchanged. People belong to it through
// `org_members` with a role; its keys name the member who made them (`api_keys.member_id`,
// kept when that member leaves), and so does each usage record and refusal (`member_id`:
// budgets, usage and the request log by member are one index away). `org_budgets` holds monthly spending
// limits: per member, or the organisation's own (member_id ''). A session acts for one
// organisation at a time (`sessions.org_id`, null: the person's own account).
import { sql, type Kysely } from 'kysely';
import type { MigrationDb } from './dialect.js';

export async function up(db: Kysely<MigrationDb>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('kind', 'varchar(20)', (c) => c.notNull().defaultTo('personal')).execute();
  await db.schema.alterTable('accounts').addColumn('require_sso', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // An organisation's name is its handle in the CLI and the console: one per name.
  await db.schema.createIndex('accounts_org_name').on('accounts').column('name').unique().where(sql.ref('kind'), '=', 'org').execute();

  await db.schema
    .createTable('org_members')
    .addColumn('org_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('account_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('role', 'varchar(20)', (c) => c.notNull())
    .addColumn('created_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('org_members_pkey', ['org_id', 'account_id'])
    .execute();
  // A person's organisations (the dashboard's switcher).
  await db.schema.createIndex('org_members_account_id').on('org_members').column('account_id').execute();

  await db.schema
    .createTable('org_budgets')
    .addColumn('org_id', 'varchar(40)', (c) => c.notNull().references('accounts.id'))
    .addColumn('member_id', 'varchar(40)', (c) => c.notNull())
    .addColumn('monthly_micros', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'varchar(40)', (c) => c.notNull())
    .addPrimaryKeyConstraint('org_budgets_pkey', ['org_id', 'member_id'])
    .execute();

  await db.schema.alterTable('api_keys').addColumn('member_id', 'varchar(40)').execute();
  await db.schema.alterTable('usage_records').addColumn('member_id', 'varchar(40)').execute();
  // A member's spending in a month (their budget) and their usage.
  await db.schema.createIndex('usage_records_member_id_created_at').on('usage_records').columns(['member_id', 'created_at']).execute();
  await db.schema.alterTable('refused_requests').addColumn('member_id', 'varchar(40)').execute();
  await db.schema.alterTable('sessions').addColumn('org_id', 'varchar(40)').execute();
}
