// The account's API keys: list, create (the secret is shown once), revoke.
import { Type } from '@sinclair/typebox';
import type { TypeBoxFastify } from '../../http/typebox.js';
import { signedIn, type DashboardServices } from '../context.js';
import { MESSAGES, TRIM } from '../input-validator.js';
import { KeyView, keyView } from '../views.js';

const CreateBody = Type.Object({
  name: Type.String({ [TRIM]: true, minLength: 1, maxLength: 100, [MESSAGES]: { minLength: 'Give the key a name.' } }),
});
const KeyParams = Type.Object({ id: Type.String() });
const KeyList = Type.Object({ keys: Type.Array(KeyView) });
const CreatedKey = Type.Object({ key: KeyView, secret: Type.String() });
const RevokedKey = Type.Object({ key: KeyView });

export function keyRoutes(dashboard: TypeBoxFastify, services: DashboardServices): void {
  const { store, commands } = services;

  dashboard.get('/keys', { schema: { response: { 200: KeyList } } }, async (request) => {
    const keys = await store.listKeys(signedIn(request).account.id);
    return { keys: keys.reverse().map(keyView) };
  });

  dashboard.post('/keys', { schema: { body: CreateBody, response: { 201: CreatedKey } } }, async (request, reply) => {
    const { name } = request.body;
    const { record, secret } = await commands.createKey(signedIn(request).account.id, name);
    return reply.code(201).send({ key: keyView(record), secret });
  });

  dashboard.delete('/keys/:id', { schema: { params: KeyParams, response: { 200: RevokedKey } } }, async (request) => {
    const key = await commands.revokeKey(request.params.id, signedIn(request).account.id);
    return { key: keyView(key) };
  });
}
