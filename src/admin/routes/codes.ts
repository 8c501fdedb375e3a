// Redemption codes: create (printed once, only hashes are stored), list, disable.
import { Type } from '@sinclair/typebox';
import { MESSAGES } from '../../validation/input-validator.js';
import { ValidationError } from '../../errors.js';
import type { TypeBoxFastify } from '../../http/typebox.js';
import { callerOf, type AdminServices } from '../context.js';
import { IdParams, MAX_MICROS } from '../schemas.js';
import type * as Json from '../api-types.js';
import { AdminCode, codeView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';

const NOT_A_TIME = 'Use an ISO 8601 time, such as 2026-12-31T23:59:59Z.';
const CreateBody = Type.Object({
  amount_micros: Type.Integer({ minimum: 1, maximum: MAX_MICROS }),
  count: Type.Integer({ minimum: 1, maximum: 1000, default: 1 }),
  expires_at: Type.Optional(
    Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T', maxLength: 40, description: 'ISO 8601 time; the code stops working then', [MESSAGES]: { pattern: NOT_A_TIME } }),
  ),
});
const Created = Type.Object({ codes: Type.Array(Type.Object({ code: Type.String({ description: 'shown once' }), ...AdminCode.properties })) });
export type Created = JsonOf<typeof Created, Json.CreatedCodes>;
const CodeList = Type.Object({ codes: Type.Array(AdminCode) });
export type CodeList = JsonOf<typeof CodeList, Json.CodeList>;
const OneCode = Type.Object({ code: AdminCode });
export type OneCode = JsonOf<typeof OneCode, Json.OneCode>;

const tags = ['codes'];

export function codeRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, commands } = services;

  admin.get('/codes', { schema: { tags, summary: 'Every code, newest first (never the code itself)', response: { 200: CodeList } } }, async () => ({
    codes: (await store.listRedemptionCodes()).map(codeView),
  }));

  admin.post(
    '/codes',
    { config: { adminScope: 'credits' }, schema: { tags, summary: 'Create redemption codes', body: CreateBody, response: { 201: Created } } },
    async (request, reply) => {
      const { amount_micros: amountMicros, count, expires_at: expiresText } = request.body;
      const expiresMs = expiresText === undefined ? null : Date.parse(expiresText);
      if (expiresMs !== null && Number.isNaN(expiresMs)) throw new ValidationError({ expires_at: [NOT_A_TIME] });
      if (expiresMs !== null && expiresMs <= Date.now()) throw new ValidationError({ expires_at: ['Must be in the future.'] });
      const expiresAt = expiresMs === null ? null : new Date(expiresMs).toISOString();
      const created = await commands.codes.create({ amountMicros, count, expiresAt }, callerOf(request).actor);
      return reply.code(201).send({ codes: created.map(({ code, record }) => ({ code, ...codeView(record) })) });
    },
  );

  admin.post(
    '/codes/:id/disable',
    { config: { adminScope: 'credits' }, schema: { tags, summary: 'Disable a code that was not redeemed', params: IdParams, response: { 200: OneCode } } },
    async (request) => ({ code: codeView(await commands.codes.disable(request.params.id, callerOf(request).actor)) }),
  );
}
