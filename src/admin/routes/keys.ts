// An account's API keys: list, create (the secret is shown once), revoke (401 on /v1 at once).
import { Type } from '@sinclair/typebox';
import { TRIM } from '../../validation/input-validator.js';
import type { TypeBoxFastify } from '../../http/typebox.js';
import { callerOf, type AdminServices } from '../context.js';
import { AccountParams, IdParams, requireAccount } from '../schemas.js';
import type * as Json from '../api-types.js';
import { AdminKey, adminKeyView } from '../views.js';
import type { JsonOf } from '../../http/typebox.js';

const CreateBody = Type.Object({ name: Type.String({ [TRIM]: true, minLength: 1, maxLength: 100 }) });
const KeyList = Type.Object({ keys: Type.Array(AdminKey) });
export type KeyList = JsonOf<typeof KeyList, Json.KeyList>;
const CreatedKey = Type.Object({ key: AdminKey, secret: Type.String({ description: 'shown once' }) });
export type CreatedKey = JsonOf<typeof CreatedKey, Json.CreatedKey>;
const OneKey = Type.Object({ key: AdminKey });
export type OneKey = JsonOf<typeof OneKey, Json.OneKey>;

const tags = ['keys'];

export function keyRoutes(admin: TypeBoxFastify, services: AdminServices): void {
  const { store, commands } = services;

  admin.get('/accounts/:id/keys', { schema: { tags, summary: "An account's keys, newest first", params: AccountParams, response: { 200: KeyList } } }, async (request) => {
    const account = await requireAccount(store, request.params.id);
    return { keys: (await store.listKeys(account.id)).reverse().map(adminKeyView) };
  });

  admin.post(
    '/accounts/:id/keys',
    { config: { adminScope: 'keys' }, schema: { tags, summary: 'Create a key for an account', params: AccountParams, body: CreateBody, response: { 201: CreatedKey } } },
    async (request, reply) => {
      const account = await requireAccount(store, request.params.id);
      const { record, secret } = await commands.keys.create(account.id, request.body.name, undefined, callerOf(request).actor);
      return reply.code(201).send({ key: adminKeyView(record), secret });
    },
  );

  admin.post(
    '/keys/:id/revoke',
    { config: { adminScope: 'keys' }, schema: { tags, summary: 'Revoke a key (idempotent)', params: IdParams, response: { 200: OneKey } } },
    async (request) => ({ key: adminKeyView(await commands.keys.revoke(request.params.id, undefined, callerOf(request).actor)) }),
  );
}
