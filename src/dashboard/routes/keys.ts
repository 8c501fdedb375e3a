// The account's API keys: list, create (the secret is shown once), revoke.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createApiKey } from '../../auth/keys.js';
import { parseInput } from '../body.js';
import { Refusal } from '../../errors.js';
import { signedIn, type DashboardServices } from '../context.js';
import { keyView } from '../views.js';

const createBody = z.object({ name: z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.') });

export function keyRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { store, keyCache } = services;

  dashboard.get('/keys', async (request) => {
    const keys = await store.listKeys(signedIn(request).account.id);
    return { keys: keys.reverse().map(keyView) };
  });

  dashboard.post('/keys', async (request, reply) => {
    const { name } = parseInput(createBody, request.body);
    const { record, secret } = await createApiKey(store, signedIn(request).account.id, name);
    return reply.code(201).send({ key: keyView(record), secret });
  });

  dashboard.delete<{ Params: { id: string } }>('/keys/:id', async (request) => {
    const key = await store.revokeAccountKey(signedIn(request).account.id, request.params.id);
    if (!key) throw new Refusal('key_not_found');
    // Effective at once in this process: the cache now holds the revoked key, so the next
    // call with it gets key_revoked without a store read. Other instances learn it from
    // the change event the store wrote.
    keyCache.putKey(key.keyHash, key);
    return { key: keyView(key) };
  });
}
