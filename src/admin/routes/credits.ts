// Credits: grant, adjust (never below zero) and the ledger. Each change is a ledger entry
// and an audit row, written together.
import { Type } from '@sinclair/typebox';
import { MESSAGES } from '../../validation/input-validator.js';
import { Nullable, type TypeBoxFastify } from '../../http/typebox.js';
import { callerOf, type AdminServices } from '../context.js';
import { AccountParams, MAX_MICROS, Reason, requireAccount } from '../schemas.js';
import type * as Json from '../api-types.js';
import { AdminLedgerEntry, ledgerEntryView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';

const GrantBody = Type.Object({ amount_micros: Type.Integer({ minimum: 1, maximum: MAX_MICROS }), reason: Reason });
const AdjustBody = Type.Object({
  amount_micros: Type.Integer({
    minimum: -MAX_MICROS,
    maximum: MAX_MICROS,
    not: { const: 0 },
    description: 'positive adds, negative takes (409 rather than go below zero)',
    [MESSAGES]: { not: 'Must not be zero.' },
  }),
  reason: Reason,
});
const Changed = Type.Object({ entry: AdminLedgerEntry, balance_micros: Type.Integer() });
export type Changed = JsonOf<typeof Changed, Json.CreditsChanged>;
const LedgerQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  before_id: Type.Optional(Type.Integer({ minimum: 1, description: 'entries older than this one (the previous page’s next_before_id)' })),
});
const Ledger = Type.Object({
  balance_micros: Type.Integer(),
  entries: Type.Array(AdminLedgerEntry),
  next_before_id: Nullable(Type.Integer({ description: 'the next page’s before_id; null on the last' })),
});
export type Ledger = JsonOf<typeof Ledger, Json.Ledger>;

const tags = ['credits'];

export function creditRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, commands, balances } = services;

  admin.post(
    '/accounts/:id/credits/grant',
    { config: { adminScope: 'credits' }, schema: { tags, summary: 'Grant credits', params: AccountParams, body: GrantBody, response: { 200: Changed } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const { amount_micros: amountMicros, reason } = request.body;
      const { entry, balanceMicros } = await commands.credits.grant({ accountId: account.id, amountMicros, reason }, callerOf(request).actor);
      return { entry: ledgerEntryView(entry), balance_micros: balanceMicros };
    },
  );

  admin.post(
    '/accounts/:id/credits/adjust',
    { config: { adminScope: 'credits' }, schema: { tags, summary: 'Add or take credits', params: AccountParams, body: AdjustBody, response: { 200: Changed } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const { amount_micros: amountMicros, reason } = request.body;
      const { entry, balanceMicros } = await commands.credits.adjust({ accountId: account.id, amountMicros, reason }, callerOf(request).actor);
      return { entry: ledgerEntryView(entry), balance_micros: balanceMicros };
    },
  );

  admin.get(
    '/accounts/:id/ledger',
    { schema: { tags, summary: "An account's ledger, newest first", params: AccountParams, querystring: LedgerQuery, response: { 200: Ledger } } },
    async (request) => {
      const account = await requireAccount(store, request.params.id);
      const { limit, before_id: beforeId } = request.query;
      // One more than the page tells whether another follows.
      const [entries, { balanceMicros }] = await Promise.all([store.listLedger(account.id, { limit: limit + 1, ...(beforeId === undefined ? {} : { beforeId }) }), balances.of(account.id)]);
      const page = entries.slice(0, limit);
      return { balance_micros: balanceMicros, entries: page.map(ledgerEntryView), next_before_id: entries.length > limit ? page[page.length - 1]!.id : null };
    },
  );
}
