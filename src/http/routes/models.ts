import type { FastifyInstance } from 'fastify';
import type { AppServices } from '../../services.js';

/** GET models, GET models/{id}: OpenAI's list and object shapes, plus price and context. */
export function modelRoutes(api: FastifyInstance, services: AppServices): void {
  api.get('/models', async () => ({
    object: 'list',
    data: services.catalog.list().map((model) => model.json),
  }));

  // A wildcard, because upstream model ids often hold a slash (meta-llama/Llama-3.1-8B).
  api.get<{ Params: { '*': string } }>('/models/*', async (request) =>
    services.catalog.resolve(decodeURIComponent(request.params['*'])).json,
  );
}
