// The account's API keys: list, create (the secret is shown once), revoke.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseInput } from '../body.js';
import { signedIn, type DashboardServices } from '../context.js';
import { keyView } from '../views.js';

const createBody = z.object({ name: z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.') });

export function keyRoutes(dashboard: FastifyInstance, services: DashboardServices): void {
  const { store, commands } = services;

  dashboard.get('/keys', async (request) => {
    const keys = await store.listKeys(signedIn(request).account.id);
    return { keys: keys.reverse().map(keyView) };
  });

  dashboard.post('/keys', async (request, reply) => {
    const { name } = parseInput(createBody, request.body);
    const { record, secret } = await commands.createKey(signedIn(request).account.id, name);
    return reply.code(201).send({ key: keyView(record), secret });
  });

  dashboard.delete<{ Params: { id: string } }>('/keys/:id', async (request) => {
    const key = await commands.revokeKey(request.params.id, signedIn(request).account.id);
    return { key: keyView(key) };
  });
}
