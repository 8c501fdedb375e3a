// Accounts: search and page through them, show one, create, suspend and reactivate, change
// tier, set or reset the password.
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { MESSAGES, TRIM } from '../../validation/input-validator.js';
import { hashPassword } from '../../auth/passwords.js';
import { ValidationError } from '../../errors.js';
import { parseExpiry } from '../../expiry.js';
import { lacksNeededSubscription, subscriptionWarning } from '../../billing/tiers.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { assertScope } from '../caller.js';
import { callerOf, type AdminServices } from '../context.js';
import { AccountParams, MAX_MICROS, requireAccount } from '../schemas.js';
import type { Account } from '../../store/store.js';
import type * as Json from '../api-types.js';
import { AdminAccount, adminAccountView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';

const ListQuery = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 320, description: 'part of an email or name, any case, or a whole account id' })),
  sort: Type.Union([Type.Literal('newest'), Type.Literal('oldest'), Type.Literal('email'), Type.Literal('balance')], { default: 'newest', description: 'newest or oldest created first, by email, or largest balance first' }),
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
const AccountPage = Type.Object({ accounts: Type.Array(AdminAccount), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
export type AccountPage = JsonOf<typeof AccountPage, Json.AccountPage>;
const CreateBody = Type.Object({
  email: Type.String({ [TRIM]: true, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', [MESSAGES]: { pattern: 'Enter a valid email address.' } }),
  name: Type.Optional(Nullable(Type.String({ [TRIM]: true, maxLength: 200 }))),
  tier: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  credits_micros: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_MICROS, description: 'granted with the account (needs the credits scope)' })),
});
const OneAccount = Type.Object({ account: AdminAccount });
export type OneAccount = JsonOf<typeof OneAccount, Json.OneAccount>;
const AccountDetail = Type.Object({
  account: AdminAccount,
  reserved_micros: Type.Integer({ description: 'held by requests in progress on this instance, or on every instance in shared mode' }),
  available_micros: Type.Integer(),
});
export type AccountDetail = JsonOf<typeof AccountDetail, Json.AccountDetail>;
const TierBody = Type.Object({
  tier: Type.String({ minLength: 1, maxLength: 100 }),
  comp: Type.Optional(Type.Boolean({ description: 'complimentary: the tier without the subscription it needs' })),
  comp_until: Type.Optional(Type.String({ maxLength: 40, description: 'with comp: its end, a date (YYYY-MM-DD, through that UTC day) or an ISO 8601 time; omit for none' })),
});
const TierChange = Type.Object({
  account: AdminAccount,
  warning: Nullable(Type.String({ description: 'set when the tier needs a subscription the account lacks: every API call will be refused' })),
});
export type TierChange = JsonOf<typeof TierChange, Json.TierChange>;
const PriceMultiplierBody = Type.Object({
  price_multiplier_ppm: Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: '1,000,000: the prices as configured; 900,000: 10 % off; 1,200,000: 20 % more' }),
});
const PasswordBody = Type.Object({
  password: Type.Optional(Type.String({ minLength: 10, maxLength: 200, description: 'omit to have one generated' })),
});
const PasswordSet = Type.Object({ generated_password: Nullable(Type.String({ description: 'shown once, when one was generated' })) });
export type PasswordSet = JsonOf<typeof PasswordSet, Json.PasswordSet>;

const tags = ['accounts'];

export function accountRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, sessions, commands, config, balances, tiers } = services;
  const view = (account: Account, balanceMicros: number): AdminAccount => adminAccountView(account, balanceMicros, tiers.of(account));

  const assertTier = (tier: string): void => {
    if (!Object.hasOwn(config.tiers, tier)) throw new ValidationError({ tier: [`No tier "${tier}". Configured: ${Object.keys(config.tiers).join(', ')}.`] });
  };

  admin.get('/accounts', { schema: { tags, summary: 'Search and page through accounts', querystring: ListQuery, response: { 200: AccountPage } } }, async (request) => {
    const { search, sort, limit, offset } = request.query;
    const page = await store.searchAccounts({ search, sort, limit, offset });
    return { accounts: page.accounts.map((a) => view(a, a.balanceMicros)), total: page.total, limit, offset };
  });

  admin.post(
    '/accounts',
    { config: { adminScope: 'accounts' }, schema: { tags, summary: 'Create an account', body: CreateBody, response: { 201: OneAccount } } },
    async (request, reply) => {
      const { email, name, tier = config.default_tier, credits_micros: creditsMicros = 0 } = request.body;
      const caller = callerOf(request);
      if (creditsMicros > 0) assertScope(caller, 'credits');
      assertTier(tier);
      const created = await commands.accounts.create({ email, name: name || null, tier, creditsMicros, creditsReason: 'initial credits' }, caller.actor);
      return reply.code(201).send({ account: view(created.account, created.balanceMicros) });
    },
  );

  admin.get('/accounts/:id', { schema: { tags, summary: 'One account, with its live balance', params: AccountParams, response: { 200: AccountDetail } } }, async (request) => {
    const account = await requireAccount(store, request.params.id);
    const { balanceMicros, reservedMicros, availableMicros } = await balances.of(account.id);
    return { account: view(account, balanceMicros), reserved_micros: reservedMicros, available_micros: availableMicros };
  });

  for (const [action, status] of [['suspend', 'suspended'], ['reactivate', 'active']] as const) {
    admin.post(
      `/accounts/:id/${action}`,
      {
        config: { adminScope: 'accounts' },
        schema: { tags, summary: action === 'suspend' ? 'Suspend an account (its keys get 403 at once)' : 'Reactivate an account', params: AccountParams, response: { 200: OneAccount } },
      },
      async (request) => {
        const account = await requireAccount(store, request.params.id);
        const updated = await commands.accounts.setStatus(account.id, status, callerOf(request).actor);
        return { account: view(updated, (await balances.of(account.id)).balanceMicros) };
      },
    );
  }

  admin.post(
    '/accounts/:id/tier',
    { config: { adminScope: 'accounts' }, schema: { tags, summary: "Change an account's tier", params: AccountParams, body: TierBody, response: { 200: TierChange } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      assertTier(request.body.tier);
      const updated = await commands.accounts.setTier(account.id, request.body.tier, callerOf(request).actor, compOf(request.body));
      const tier = tiers.of(updated);
      const warning = lacksNeededSubscription(updated, tier) ? subscriptionWarning(updated, tier.name) : null;
      return { account: view(updated, (await balances.of(account.id)).balanceMicros), warning };
    },
  );

  admin.post(
    '/accounts/:id/price-multiplier',
    {
      config: { adminScope: 'accounts' },
      schema: { tags, summary: "Set an account's price multiplier (a discount or a markup on every price)", params: AccountParams, body: PriceMultiplierBody, response: { 200: OneAccount } },
    },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const updated = await commands.accounts.setPriceMultiplier(account.id, request.body.price_multiplier_ppm, callerOf(request).actor);
      return { account: view(updated, (await balances.of(account.id)).balanceMicros) };
    },
  );

  admin.post(
    '/accounts/:id/password',
    {
      config: { adminScope: 'accounts' },
      schema: { tags, summary: 'Set a password, or generate one (every session of the account is signed out)', params: AccountParams, body: PasswordBody, response: { 200: PasswordSet } },
    },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const generated = request.body.password === undefined ? randomBytes(15).toString('base64url') : null;
      await commands.accounts.setPassword(account.id, await hashPassword(request.body.password ?? generated!), callerOf(request).actor);
      // Whoever held the old password holds no session either.
      await sessions.endAll(account.id);
      return { generated_password: generated };
    },
  );
}

/** The body's comp as the command takes it; a past or malformed end is a 422 on comp_until. */
function compOf(body: { comp?: boolean; comp_until?: string }): { until: string | null } | undefined {
  if (!body.comp) {
    if (body.comp_until !== undefined) throw new ValidationError({ comp_until: ['Goes with comp: true.'] });
    return undefined;
  }
  if (body.comp_until === undefined || body.comp_until === '') return { until: null };
  const parsed = parseExpiry(body.comp_until);
  if ('problem' in parsed) throw new ValidationError({ comp_until: [parsed.problem === 'past' ? 'This moment has passed.' : 'Enter a date (YYYY-MM-DD) or an ISO 8601 time.'] });
  return { until: parsed.expiresAt };
}
