// The baseline: a bare Fastify route that parses the JSON body and answers with a
// pre-built JSON body of a given size. lmgate's figures are read as a ratio to this one.
import Fastify from 'fastify';

const bytes = Number(process.argv[2] ?? 400);
const port = Number(process.argv[3] ?? 0);
const payload = { object: 'chat.completion', filler: 'x'.repeat(Math.max(0, bytes - 40)) };

const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async () => payload);
const address = await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`${address}\n`);
