// The upstream model server of the upstream benchmark: the least a server speaking
// OpenAI's wire protocol can do. Every answer is prebuilt; a request is read to its end
// and answered with a chat completion, or, when it asks to stream, with the chunks of one,
// the usage chunk when asked for, and `[DONE]`. Each chunk goes out in its own turn of
// the event loop, so in its own TCP segment, as a model server sends tokens: a proxy pays
// its per-chunk cost for each. The model `bench-slow-model` streams as a slow model does
// instead: a chunk every 100 ms for 20 s, to hold many streams open at once.
import { createServer, type ServerResponse } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const WORDS = 'Hello there! Please repeat this sentence back to me, word for word.'.split(' ');
const base = { id: 'chatcmpl-bench', created: 1767225600, model: 'bench-model' };
const usage = { prompt_tokens: 21, completion_tokens: WORDS.length, total_tokens: 21 + WORDS.length };

const completion = JSON.stringify({
  ...base,
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join(' ') }, finish_reason: 'stop', logprobs: null }],
  usage,
});
const chunk = (choices: unknown[], extra: object = {}): string =>
  `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
const chunks = [
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  ...WORDS.map((word, i) => chunk([{ index: 0, delta: { content: i === 0 ? word : ` ${word}` }, finish_reason: null }])),
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
];
const usageChunk = chunk([], { usage });

const SLOW_MODEL = '"model":"bench-slow-model"';
const SLOW_CHUNK_MS = 100;
const SLOW_WORDS = 200;
const slowUsage = { prompt_tokens: 21, completion_tokens: SLOW_WORDS, total_tokens: 21 + SLOW_WORDS };
const slowChunks = [
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
  ...Array.from({ length: SLOW_WORDS }, (_, i) => chunk([{ index: 0, delta: { content: `${WORDS[i % WORDS.length]} ` }, finish_reason: null }])),
  chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]),
];
const slowUsageChunk = chunk([], { usage: slowUsage });

/** Writes events one per `delayMs` (0: one per turn of the event loop), then `[DONE]`. */
function sendEvents(res: ServerResponse, events: readonly string[], delayMs: number): void {
  let next = 0;
  const send = (): void => {
    if (res.destroyed) return;
    if (next === events.length) res.end('data: [DONE]\n\n');
    else {
      res.write(events[next++]);
      if (delayMs === 0) setImmediate(send);
      else setTimeout(send, delayMs);
    }
  };
  send();
}

createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (part: string) => (body += part));
  req.on('end', () => {
    if (!body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(completion) });
      res.end(completion);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const withUsage = body.includes('"include_usage":true');
    if (body.includes(SLOW_MODEL)) sendEvents(res, withUsage ? [...slowChunks, slowUsageChunk] : slowChunks, SLOW_CHUNK_MS);
    else sendEvents(res, withUsage ? [...chunks, usageChunk] : chunks, 0);
  });
}).listen(port, '127.0.0.1', function (this: import('node:net').Server) {
  const address = this.address() as import('node:net').AddressInfo;
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
