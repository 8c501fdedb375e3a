// The account's API keys: list, create (the secret is shown once), revoke.
import { Type } from '@sinclair/typebox';
import { createApiKey } from '../../auth/keys.js';
import type { TypeBoxFastify } from '../../http/typebox.js';
import { DashboardError } from '../dashboard-error.js';
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
  const { store, keyCache } = services;

  dashboard.get('/keys', { schema: { response: { 200: KeyList } } }, async (request) => {
    const keys = await store.listKeys(signedIn(request).account.id);
    return { keys: keys.reverse().map(keyView) };
  });

  dashboard.post('/keys', { schema: { body: CreateBody, response: { 201: CreatedKey } } }, async (request, reply) => {
    const { name } = request.body;
    const { record, secret } = await createApiKey(store, signedIn(request).account.id, name);
    return reply.code(201).send({ key: keyView(record), secret });
  });

  dashboard.delete('/keys/:id', { schema: { params: KeyParams, response: { 200: RevokedKey } } }, async (request) => {
    const key = await store.revokeAccountKey(signedIn(request).account.id, request.params.id);
    if (!key) throw new DashboardError(404, 'Key not found.');
    // Effective at once in this process: the cache now holds the revoked key, so the next
    // call with it gets key_revoked without a store read. Other instances learn it from
    // the change event the store wrote.
    keyCache.putKey(key.keyHash, key);
    return { key: keyView(key) };
  });
}
