// The fuzzer's cases: a pure function of (seed, index, target), so any case can be replayed
// alone. Three families: structured mutations of valid chat requests, framing and byte
// abuse of HTTP itself, and abuse of the headers lmgate reads.
import { METHODS } from 'node:http';
import { createRandom } from '../../src/models/lorem-text.js';

/** What the cases are aimed at: keys of accounts in different states, and model names. */
export interface FuzzTarget {
  keys: { funded: string; broke: string; revoked: string; suspended: string };
  /** A priced model answering at once, so every 2xx costs credits. */
  model: string;
}

export type Family = 'structured' | 'framing' | 'headers';

export interface FuzzCase {
  family: Family;
  /** What was done, for the failure message. */
  description: string;
  /** Written in order, each flushed (a request split across packets). */
  chunks: Buffer[];
  /** The request may be incomplete or ambiguous, so the server may wait for more instead of answering. */
  mayWait: boolean;
  /** The first request is HEAD: its response has no body. */
  head: boolean;
  /** Requests sent on the connection (pipelining); answers beyond the first are read too. */
  requests: number;
}

type Random = () => number;

/** Mutations reach only the first elements of an array, so the rest may share one copy. */
const REACHABLE = 20;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function generateCase(seed: number, index: number, target: FuzzTarget): FuzzCase {
  // Mixing the index in (not seed + index) keeps seeds' sequences apart.
  const random = createRandom(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
  // The case's own request id: a charge found later names the case that caused it.
  const tag: [string, string] = ['X-Request-Id', caseRequestId(seed, index)];
  const roll = random();
  if (roll < 0.6) return structuredCase(random, target, tag);
  if (roll < 0.8) return framingCase(random, target, tag);
  return headerCase(random, target, tag);
}

export function caseRequestId(seed: number, index: number): string {
  return `fz-${seed}-${index}`;
}

// ---------------------------------------------------------------- structured mutations

function baseRequest(random: Random, model: string): Record<string, Json> {
  const templates: (() => Record<string, Json>)[] = [
    () => ({ model, messages: [{ role: 'user', content: 'hi' }] }),
    () => ({
      model,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is 2+2?' },
        { role: 'assistant', content: '4' },
        { role: 'user', content: 'And 3+3?' },
      ],
      temperature: 0.7,
      top_p: 0.9,
      max_tokens: 50,
      n: 1,
      stop: ['\n\n'],
      user: 'fuzz',
      seed: 7,
    }),
    () => ({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream this please' }] }),
    () => ({
      model,
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'auto',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":20}' },
      ] as Json[],
    }),
    () => ({
      model,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'world' }] }],
      response_format: { type: 'text' },
      logit_bias: { '50256': -100 },
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      max_completion_tokens: 20,
    }),
  ];
  return pick(random, templates)();
}

const MUTATIONS: ((random: Random, root: Record<string, Json>) => string)[] = [
  // Replace any value with an interesting one.
  (random, root) => {
    const node = pickNode(random, root);
    if (!node) return 'nothing to replace';
    const [path, parent, key] = node;
    const value = interestingValue(random);
    setAt(parent, key, value);
    return `${path} = ${preview(value)}`;
  },
  // Delete a field or an element.
  (random, root) => {
    const node = pickNode(random, root);
    if (!node) return 'nothing to delete';
    const [path, parent, key] = node;
    if (Array.isArray(parent)) parent.splice(Number(key), 1);
    else delete (parent as Record<string, Json>)[key];
    return `delete ${path}`;
  },
  // Add an unknown or dangerous field.
  (random, root) => {
    const objects = collectNodes(root, '$').filter(([, node]) => isObject(node));
    const [path, node] = pick(random, objects);
    const key = pick(random, ['__proto__', 'constructor', 'prototype', 'x', '', 'role', 'model', 'messages', 'toString', 'a'.repeat(300)]);
    // defineProperty, so that "__proto__" becomes a key of the JSON rather than a prototype.
    Object.defineProperty(node, key, { value: interestingValue(random), enumerable: true, writable: true, configurable: true });
    return `${path}[${JSON.stringify(key.slice(0, 20))}] added`;
  },
  // Repeat an array element many times.
  (random, root) => {
    const arrays = collectNodes(root, '$').filter(([, node]) => Array.isArray(node) && node.length > 0);
    if (arrays.length === 0) return 'no arrays';
    const [path, node] = pick(random, arrays);
    const array = node as Json[];
    const element = array[0]!;
    // At most a few MB in all: past the body limit sometimes, never past memory. The copies
    // that later mutations can reach are clones, so mutating one changes only it.
    const room = 6e6 - JSON.stringify(root).length;
    const wanted = random() < 0.9 ? pick(random, [2, 20, 100, 1000]) : pick(random, [10_001, 20_000]);
    const times = Math.max(0, Math.min(wanted, Math.floor(room / (JSON.stringify(element)?.length ?? 1))));
    const shared = structuredClone(element);
    for (let i = 0; i < times; i++) array.push(array.length < REACHABLE ? structuredClone(element) : shared);
    return `${path} repeated ${times}×`;
  },
  // Change a message's role to another (valid or not).
  (random, root) => {
    const messages = root.messages;
    if (!Array.isArray(messages) || messages.length === 0) return 'no messages';
    const i = Math.floor(random() * Math.min(messages.length, REACHABLE));
    const message = messages[i];
    if (!isObject(message)) return 'message not an object';
    const role = pick(random, ['system', 'developer', 'user', 'assistant', 'tool', 'function', 'USER', '', 'root']);
    (message as Record<string, Json>).role = role;
    return `messages.${i}.role = ${role}`;
  },
  // Carry tool calls or a tool_call_id somewhere unusual.
  (random, root) => {
    const messages = root.messages;
    if (!Array.isArray(messages) || messages.length === 0) return 'no messages';
    const i = Math.floor(random() * Math.min(messages.length, REACHABLE));
    const message = messages[i];
    if (!isObject(message)) return 'message not an object';
    if (random() < 0.5) (message as Record<string, Json>).tool_calls = pick(random, [[null], 'x', [{}], [{ id: 1, function: null }], [{ id: 'c', type: 'function', function: { name: 'f', arguments: 7 } }]] as Json[]);
    else (message as Record<string, Json>).tool_call_id = interestingValue(random);
    return `messages.${i} tool fields`;
  },
];

function structuredCase(random: Random, target: FuzzTarget, tag: [string, string]): FuzzCase {
  const root = baseRequest(random, target.model);
  const steps: string[] = [];
  const count = 1 + Math.floor(random() * 3);
  for (let i = 0; i < count; i++) steps.push(pick(random, MUTATIONS)(random, root));
  let body = JSON.stringify(root);
  if (random() < 0.2) {
    const corrupted = corruptText(random, body);
    body = corrupted.text;
    steps.push(corrupted.description);
  }
  const path = pick(random, ['/v1/chat/completions', '/v1/chat/completions', '/api/v1/chat/completions']);
  const bytes = Buffer.from(body, random() < 0.05 ? 'latin1' : 'utf8');
  return {
    family: 'structured',
    description: `POST ${path}: ${steps.join('; ')}`,
    chunks: [request('POST', path, [...standardHeaders(target.keys.funded, bytes.length), tag], bytes)],
    mayWait: false,
    head: false,
    requests: 1,
  };
}

function corruptText(random: Random, text: string): { text: string; description: string } {
  const at = Math.floor(random() * text.length);
  const edits: [string, () => string][] = [
    ['truncated', () => text.slice(0, at)],
    ['a character dropped', () => text.slice(0, at) + text.slice(at + 1)],
    ['a byte inserted', () => text.slice(0, at) + String.fromCharCode(Math.floor(random() * 256)) + text.slice(at)],
    ['trailing garbage', () => `${text} }{`],
    ['a byte-order mark', () => `\ufeff${text}`],
    ['a duplicate model key', () => text.replace('{', '{"model":"other",')],
    ['a huge exponent', () => text.replace(/\d+/, '1e99999')],
    ['a lone surrogate escape', () => text.replace('"hi"', '"\\ud800"')],
    ['empty', () => ''],
    ['a JSON scalar', () => pick(random, ['null', '1', '"x"', 'true', '[]'])],
  ];
  const [description, edit] = pick(random, edits);
  return { text: edit(), description };
}

function interestingValue(random: Random): Json {
  const values: (() => Json)[] = [
    () => null,
    () => true,
    () => 0,
    () => -1,
    () => 1.5,
    () => 2 ** 53 + 2,
    () => -1e308,
    () => 1e-320,
    () => '',
    () => '\u0000',
    () => '\ud800',
    () => '🙂'.repeat(50),
    () => 'x'.repeat(random() < 0.9 ? pick(random, [300, 5_000, 70_000]) : 1_000_000),
    () => ' '.repeat(pick(random, [2_000, 200_000])),
    () => [],
    () => [null],
    () => [1, 'a', null, {}],
    () => ({}),
    () => ({ role: 'user', content: 'nested' }),
    () => nested(pick(random, [10, 60, 70, 500])),
  ];
  return pick(random, values)();
}

function nested(depth: number): Json {
  let value: Json = 'deep';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

// ------------------------------------------------------------------------ framing

function framingCase(random: Random, target: FuzzTarget, tag: [string, string]): FuzzCase {
  const key = target.keys.funded;
  const body = Buffer.from(JSON.stringify({ model: target.model, messages: [{ role: 'user', content: 'framed' }] }));
  const path = '/v1/chat/completions';
  const base = (extra: [string, string][]): [string, string][] => [['Host', 'localhost'], ['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json'], tag, ...extra];
  const cases: (() => Omit<FuzzCase, 'family' | 'head' | 'requests'> & Partial<Pick<FuzzCase, 'requests' | 'head'>>)[] = [
    () => ({ description: 'Content-Length shorter than the body', chunks: [request('POST', path, base([['Content-Length', String(body.length - 5)]]), body)], mayWait: true }),
    () => ({ description: 'Content-Length longer than the body', chunks: [request('POST', path, base([['Content-Length', String(body.length + 50)]]), body)], mayWait: true }),
    () => ({ description: 'Content-Length as a list', chunks: [request('POST', path, base([['Content-Length', `${body.length},${body.length}`]]), body)], mayWait: false }),
    () => ({ description: 'two different Content-Length', chunks: [request('POST', path, base([['Content-Length', String(body.length)], ['Content-Length', '3']]), body)], mayWait: false }),
    () => ({ description: 'negative Content-Length', chunks: [request('POST', path, base([['Content-Length', '-1']]), body)], mayWait: false }),
    () => ({ description: 'Content-Length with a sign', chunks: [request('POST', path, base([['Content-Length', `+${body.length}`]]), body)], mayWait: false }),
    () => ({ description: 'huge Content-Length', chunks: [request('POST', path, base([['Content-Length', '99999999999999999999']]), body)], mayWait: true }),
    () => ({ description: 'chunked and Content-Length', chunks: [request('POST', path, base([['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked']]), chunked(random, body))], mayWait: false }),
    () => ({ description: 'chunked in random pieces', chunks: [request('POST', path, base([['Transfer-Encoding', 'chunked']]), chunked(random, body))], mayWait: false }),
    () => ({ description: 'chunked, each piece its own packet', chunks: splitRandomly(random, request('POST', path, base([['Transfer-Encoding', 'chunked']]), chunked(random, body))), mayWait: false }),
    () => ({ description: 'chunk extension with a quote', chunks: [request('POST', path, base([['Transfer-Encoding', 'chunked']]), Buffer.from(`${body.length.toString(16)};a"b\r\n${body}\r\n0\r\n\r\n`))], mayWait: false }),
    () => ({ description: 'chunk size not hex', chunks: [request('POST', path, base([['Transfer-Encoding', 'chunked']]), Buffer.from(`zz\r\n${body}\r\n0\r\n\r\n`))], mayWait: false }),
    () => ({ description: 'chunked without the last chunk', chunks: [request('POST', path, base([['Transfer-Encoding', 'chunked']]), Buffer.from(`${body.length.toString(16)}\r\n${body}\r\n`))], mayWait: true }),
    () => ({ description: 'chunked with trailers', chunks: [request('POST', path, base([['Transfer-Encoding', 'chunked']]), Buffer.from(`${body.length.toString(16)}\r\n${body}\r\n0\r\nX-Trailer: 1\r\n\r\n`))], mayWait: false }),
    () => ({ description: 'Transfer-Encoding gzip, chunked', chunks: [request('POST', path, base([['Transfer-Encoding', 'gzip, chunked']]), chunked(random, body))], mayWait: false }),
    () => ({ description: 'Transfer-Encoding identity', chunks: [request('POST', path, base([['Transfer-Encoding', 'identity'], ['Content-Length', String(body.length)]]), body)], mayWait: false }),
    () => ({ description: 'obs-fold header', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-A: b\r\n c\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'bare LF line endings', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\nHost: localhost\nAuthorization: Bearer ${key}\n\n`)], mayWait: true }),
    () => ({ description: 'header without a colon', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: localhost\r\nNoColon\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'space before the colon', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost : localhost\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'NUL in a header value', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: local\x00host\r\nAuthorization: Bearer ${key}\r\n\r\n`)], mayWait: false }),
    () => ({ description: '8-bit bytes in a header value', chunks: [Buffer.concat([Buffer.from('GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-A: '), Buffer.from([0xe9, 0xff, 0x80]), Buffer.from(`\r\nAuthorization: Bearer ${key}\r\n\r\n`)])], mayWait: false }),
    () => ({ description: '3000 small headers', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: localhost\r\n${'X-A: b\r\n'.repeat(3000)}\r\n`)], mayWait: false }),
    () => ({ description: 'a 40 KB header', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-A: ${'a'.repeat(40_000)}\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'a 20 KB URL', chunks: [Buffer.from(`GET /v1/models/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'HTTP/2 preface', chunks: [Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')], mayWait: true }),
    () => ({ description: 'HTTP/1.0 without Host', chunks: [Buffer.from(`GET /v1/models HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'an unknown HTTP version', chunks: [Buffer.from(`GET /v1/models HTTP/${pick(random, ['1.2', '2.0', '9.9', '0.9'])}\r\nHost: localhost\r\n\r\n`)], mayWait: false }),
    () => {
      // Every method Node's parser accepts (CONNECT has a case of its own), on paths with and without routes, with and without a body.
      const method = pick(random, METHODS.filter((each) => each !== 'CONNECT'));
      const target = pick(random, ['/v1/models/x', '/v1/chat/completions', '/..%2fetc%2fpasswd', '/', '/v1/nothing']);
      const withBody = random() < 0.5;
      return {
        description: `method ${method} on ${target}${withBody ? ' with a body' : ''}`,
        chunks: [request(method, target, withBody ? base([['Content-Length', String(body.length)]]) : [['Host', 'localhost'], tag], withBody ? body : Buffer.alloc(0))],
        mayWait: false,
        head: method === 'HEAD',
      };
    },
    () => {
      const expectation = pick(random, ['', '200-ok', 'garbage', '100-continue, x', '101-switch', 'a'.repeat(300)]);
      return { description: `Expect: ${expectation.slice(0, 20)}`, chunks: [request('POST', path, base([['Content-Length', String(body.length)], ['Expect', expectation]]), body)], mayWait: false };
    },
    () => ({ description: 'HTTP/1.1 without Host', chunks: [Buffer.from(`GET /v1/models HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: ${tag[1]}\r\n\r\n`)], mayWait: false }),
    () => ({
      description: 'a complete request, then bytes that are not HTTP on the same connection',
      chunks: [request('POST', path, base([['Content-Length', String(body.length)]]), body), pick(random, [Buffer.from('\x00\x01garbage\r\n\r\n'), randomBytes(random, 1 + Math.floor(random() * 200)), Buffer.from('GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n')])],
      mayWait: false,
      requests: 2,
    }),
    () => ({ description: 'an unknown method', chunks: [Buffer.from(`${pick(random, ['BREW', 'get', 'PROPFIND', 'TRACE', 'G\x01T'])} /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'CONNECT', chunks: [Buffer.from('CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n')], mayWait: false }),
    () => ({ description: 'odd paths', chunks: [Buffer.from(`GET ${pick(random, ['/v1/models/%zz', '/v1/models/%', '//v1/models', '/v1/../v1/models', '*', 'http://example.com/v1/models', '/v1/models?%zz=1', '/v1/models/%00', '/v1/models/a%2Fb', `/v1/models/${'m'.repeat(300)}`])} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`)], mayWait: false }),
    () => ({ description: 'random bytes', chunks: [randomBytes(random, 1 + Math.floor(random() * 2000))], mayWait: true }),
    () => ({ description: 'a valid request split byte by byte', chunks: splitRandomly(random, request('POST', path, base([['Content-Length', String(body.length)]]), body), 40), mayWait: false }),
    () => ({
      description: 'pipelined: valid then garbage',
      chunks: [Buffer.concat([request('POST', path, base([['Content-Length', String(body.length)]]), body), Buffer.from('\x00\x01garbage\r\n\r\n')])],
      mayWait: false,
      requests: 2,
    }),
    () => ({
      description: 'pipelined: two valid requests',
      chunks: [Buffer.concat([request('POST', path, base([['Content-Length', String(body.length)]]), body), request('POST', path, base([['Content-Length', String(body.length)]]), body)])],
      mayWait: false,
      requests: 2,
    }),
  ];
  const made = pick(random, cases)();
  return { family: 'framing', head: false, requests: 1, ...made };
}

// ------------------------------------------------------------------------ headers

function headerCase(random: Random, target: FuzzTarget, tag: [string, string]): FuzzCase {
  const { keys } = target;
  const stream = random() < 0.3;
  const body = Buffer.from(JSON.stringify({ model: target.model, stream, messages: [{ role: 'user', content: 'headers' }] }));
  const authorization = pick<string | undefined>(random, [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Bearer  ${keys.funded}`,
    `bearer ${keys.funded}`,
    `Basic ${Buffer.from('a:b').toString('base64')}`,
    `Bearer ${keys.funded} `,
    `Bearer ${keys.funded}x`,
    `Bearer ${'k'.repeat(10_000)}`,
    `Bearer ${keys.broke}`,
    `Bearer ${keys.revoked}`,
    `Bearer ${keys.suspended}`,
    `Bearer ${keys.funded}`,
    `Bearer ${keys.funded}`,
  ]);
  const contentType = pick<string | undefined>(random, [
    undefined,
    'text/plain',
    'application/json; charset=latin1',
    'application/json; charset=utf-16',
    'APPLICATION/JSON',
    'application/jsonx',
    'application/json, text/plain',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'application/json',
    'application/json; charset=utf-8',
  ]);
  const headers: [string, string][] = [tag, ['Host', pick(random, ['localhost', '127.0.0.1', 'example.com', '', 'a'.repeat(300)])]];
  if (authorization !== undefined) headers.push(['Authorization', authorization]);
  if (contentType !== undefined) headers.push(['Content-Type', contentType]);
  const extras: [string, string][] = [
    ['Authorization', `Bearer ${keys.funded}`],
    ['Authorization', `Bearer ${keys.broke}`],
    ['Host', 'other.example'],
    ['Content-Type', 'application/json'],
    ['Expect', '100-continue'],
    ['Content-Encoding', pick(random, ['gzip', 'br', 'identity', 'x'])],
    ['Accept', pick(random, ['text/event-stream', 'application/xml', '*/*', ''])],
    ['Accept-Encoding', pick(random, ['gzip', 'br, deflate', '*;q=0'])],
    ['Connection', pick(random, ['close', 'keep-alive', 'upgrade'])],
    ['Upgrade', pick(random, ['websocket', 'h2c'])],
    ['X-Request-Id', pick(random, ['', 'a b', 'x'.repeat(200), 'ok-id', '\u00e9'])],
    ['X-Forwarded-For', '1.2.3.4, 5.6.7.8'],
    ['Cookie', `lmgate_session=${'a'.repeat(100)}`],
    ['Origin', 'https://evil.example'],
  ];
  const extraCount = Math.floor(random() * 3);
  for (let i = 0; i < extraCount; i++) headers.push(pick(random, extras));
  const method = pick(random, ['POST', 'POST', 'POST', 'GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);
  const path = pick(random, ['/v1/chat/completions', '/api/v1/chat/completions', '/v1/models', `/v1/models/${target.model}`, '/api/billing/subscription', '/api/dashboard/me', '/metrics', '/v1/nope']);
  headers.push(['Content-Length', String(body.length)]);
  const names = headers.map(([name]) => name).join(', ');
  return {
    family: 'headers',
    description: `${method} ${path}${stream ? ' (stream)' : ''}: authorization ${JSON.stringify(authorization?.slice(0, 20))}, content-type ${JSON.stringify(contentType)}, headers ${names}`,
    chunks: [request(method, path, headers, body)],
    mayWait: false,
    head: method === 'HEAD',
    requests: 1,
  };
}

// ------------------------------------------------------------------------ helpers

function standardHeaders(key: string, length: number): [string, string][] {
  return [['Host', 'localhost'], ['Authorization', `Bearer ${key}`], ['Content-Type', 'application/json'], ['Content-Length', String(length)]];
}

function request(method: string, path: string, headers: [string, string][], body: Buffer): Buffer {
  const head = `${method} ${path} HTTP/1.1\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

function chunked(random: Random, body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; ) {
    const size = Math.min(body.length - at, 1 + Math.floor(random() * 40));
    parts.push(Buffer.from(`${size.toString(16)}\r\n`), body.subarray(at, at + size), Buffer.from('\r\n'));
    at += size;
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function splitRandomly(random: Random, bytes: Buffer, maxPieces = 8): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < maxPieces - 1 && at < bytes.length; i++) {
    const size = 1 + Math.floor(random() * Math.max(1, (bytes.length - at) / 2));
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  if (at < bytes.length) pieces.push(bytes.subarray(at));
  return pieces;
}

function randomBytes(random: Random, length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Node = [path: string, node: Json];

function collectNodes(value: Json, path: string, into: Node[] = []): Node[] {
  into.push([path, value]);
  if (Array.isArray(value)) value.slice(0, REACHABLE).forEach((item, i) => collectNodes(item, `${path}.${i}`, into));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) collectNodes(item, `${path}.${key}`, into);
  return into;
}

/** A node other than the root, with its parent and key; none when the root is empty. */
function pickNode(random: Random, root: Record<string, Json>): [path: string, parent: Json[] | Record<string, Json>, key: string] | undefined {
  const children: [string, Json[] | Record<string, Json>, string][] = [];
  const walk = (value: Json, path: string): void => {
    if (Array.isArray(value)) value.slice(0, REACHABLE).forEach((item, i) => (children.push([`${path}.${i}`, value, String(i)]), walk(item, `${path}.${i}`)));
    else if (isObject(value)) for (const [key, item] of Object.entries(value)) (children.push([`${path}.${key}`, value, key]), walk(item, `${path}.${key}`));
  };
  walk(root, '$');
  return children.length === 0 ? undefined : pick(random, children);
}

function setAt(parent: Json[] | Record<string, Json>, key: string, value: Json): void {
  if (Array.isArray(parent)) parent[Number(key)] = value;
  else parent[key] = value;
}

function preview(value: Json): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}… (${text.length} chars)` : text;
}
