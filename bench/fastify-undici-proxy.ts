// The floor for a Fastify gateway, as the upstream benchmark's third reference: Fastify in,
// an undici pool out, one Bearer key checked, the body forwarded as text and the answer
// piped back unread. What lmgate adds beyond this is its own work (validation, limits,
// metering); what this adds beyond the node:http pass-through is the framework's.
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstream = process.argv[2] ?? 'http://127.0.0.1:9000';
const port = Number(process.argv[3] ?? 0);
const authorization = `Bearer ${process.env.BENCH_KEY ?? ''}`;
const pool = new Pool(upstream);

const app = Fastify({ logger: false });
app.removeContentTypeParser('application/json');
app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
app.post('/v1/chat/completions', async (request, reply) => {
  if (request.headers.authorization !== authorization) return reply.code(401).send({ error: { message: 'invalid key' } });
  const answer = await pool.request({ path: request.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: request.body as string });
  const type = answer.headers['content-type'];
  if (typeof type === 'string') reply.type(type);
  return reply.code(answer.statusCode).send(answer.body);
});
const address = await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`${address}\n`);
