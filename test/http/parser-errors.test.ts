// Refusals from below the routes (Node's parser, the router, the singleton-header rule)
// answer in the spec's body like every other error, over raw sockets since no proper
// client can send these requests.
import { METHODS } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyClientError } from '../../src/http/client-errors.js';
import { renderError } from '../../src/http/error-reply.js';
import { sendRaw, type RawResponse } from '../helpers/raw-http.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

let t: TestApp;
let port: number;
let apiKey: string;
const BODY = '{"model":"demo-echo","messages":[{"role":"user","content":"hi"}]}';

beforeAll(async () => {
  t = await startApp();
  port = Number(new URL(t.origin).port);
  ({ apiKey } = await t.createAccount());
});
afterAll(() => t.close());

function expectUnified(response: RawResponse, status: number, message: string): void {
  expect(response.status, response.raw.slice(0, 300)).toBe(status);
  expect(response.headers['content-type']).toEqual(['application/json; charset=utf-8']);
  const requestId = response.headers['x-request-id']?.[0];
  expect(requestId).toMatch(/^req_/);
  expect(JSON.parse(response.body)).toEqual({ error: { message, code: status, request_id: requestId } });
}

const post = (headers: string, body = BODY): string =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n${headers}\r\n${body}`;

describe('framing the parser refuses: 400, then the connection is closed', () => {
  it('Content-Length shorter than the body: the request it frames is answered, the rest is not', async () => {
    const response = await sendRaw(port, post(`Content-Type: application/json\r\nContent-Length: 10\r\n`), { untilClose: true });
    expectUnified(response, 400, 'The request body is not valid JSON.');
    expect(response.responses).toHaveLength(1);
    expect(response.closed).toBe(true);
  });

  it('a valid request pipelined before garbage is answered (and charged) whole, then the connection closed', async () => {
    const response = await sendRaw(port, `${post(`Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n`)}\x00garbage\r\n\r\n`, { untilClose: true });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).choices[0].message.content).toBe('hi');
    expect(response.responses).toHaveLength(1);
    expect(response.closed).toBe(true);
  });

  const cases: Record<string, () => string> = {
    'a list in Content-Length': () => post(`Content-Type: application/json\r\nContent-Length: 103,104\r\n`),
    'chunked and Content-Length together': () =>
      post('Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n', '5\r\nhello\r\n0\r\n\r\n'),
    'a chunk size that is not hex': () => post('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n', 'zz\r\nhello\r\n0\r\n\r\n'),
    'an obs-fold header line': () => `GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-A: b\r\n c\r\n\r\n`,
    'bytes that are not HTTP': () => '\x00\x01\x02 hello\r\n\r\n',
  };
  for (const [name, request] of Object.entries(cases)) {
    it(name, async () => {
      const response = await sendRaw(port, request());
      expectUnified(response, 400, 'The request is not valid HTTP.');
      expect(response.headers.connection).toEqual(['close']);
      expect(response.closed).toBe(true);
    });
  }

  it('garbage after a complete request on a kept-alive connection is answered too', async () => {
    const response = await sendRaw(port, '', {
      chunks: [`GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`, '\x00garbage\r\n\r\n'],
      chunkGapMs: 100,
      untilClose: true,
    });
    expect(response.status).toBe(200);
    expect(response.raw).toContain('HTTP/1.1 400 Bad Request');
    expect(response.raw).toContain('"message":"The request is not valid HTTP."');
  });
});

describe('sizes', () => {
  it('a 44 KB header: 431', async () => {
    const response = await sendRaw(port, `GET /v1/models HTTP/1.1\r\nHost: localhost\r\nX-A: ${'a'.repeat(44_000)}\r\n\r\n`);
    expectUnified(response, 431, 'The request headers are too large.');
    expect(response.closed).toBe(true);
  });

  it('a 20 KB URL: 414, also when it arrives in pieces', async () => {
    const first = `GET /v1/models/${'a'.repeat(8_000)}`;
    const rest = `${'b'.repeat(12_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    expectUnified(await sendRaw(port, first + rest), 414, 'The request URL is too long.');
    expectUnified(await sendRaw(port, '', { chunks: [first, rest] }), 414, 'The request URL is too long.');
  });

  it('a URL just over 8 KiB, which Node lets through: 414 too; one at 8 KiB is routed', async () => {
    const url = (length: number) => `/v1/models/${'a'.repeat(length - '/v1/models/'.length)}`;
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`;
    const tooLong = await sendRaw(port, get(url(8 * 1024 + 1)));
    expectUnified(tooLong, 414, 'The request URL is too long.');
    // Framed well, so the connection is still good.
    expect(tooLong.closed).toBe(false);
    expectUnified(await sendRaw(port, get(url(8 * 1024))), 404, 'Model not found.');
  });
});

describe('URLs the router cannot decode', () => {
  it('bad percent-encoding in the path: 400 with the request id, the connection kept', async () => {
    const response = await sendRaw(port, `GET /v1/models/%zz HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expectUnified(response, 400, 'The request URL is not valid.');
    expect(response.closed).toBe(false);
  });
});

describe('singleton headers appearing twice: 400 before any key is looked up', () => {
  for (const [header, value] of [
    ['Authorization', 'Bearer sk-not-a-key'],
    ['authorization', `Bearer ${'x'}`],
    ['Host', 'example.com'],
    ['CONTENT-TYPE', 'text/plain'],
  ] as const) {
    it(`a second ${header}`, async () => {
      const canonical = header.toLowerCase() === 'content-type' ? 'Content-Type' : header[0]!.toUpperCase() + header.slice(1).toLowerCase();
      const response = await sendRaw(port, post(`Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n${header}: ${value}\r\n`));
      expectUnified(response, 400, `The ${canonical} header may appear only once.`);
    });
  }

  it('two Authorization headers are refused even when both carry the valid key', async () => {
    const response = await sendRaw(port, `GET /v1/models HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expectUnified(response, 400, 'The Authorization header may appear only once.');
    expect(response.headers['x-ratelimit-remaining']).toBeUndefined();
  });

  it('one of each is fine', async () => {
    const response = await sendRaw(port, post(`Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n`));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body).choices[0].message.content).toBe('hi');
  });
});

describe('codings lmgate does not decode', () => {
  const chunkedBody = `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;

  it('a transfer coding besides chunked: 400, since the body would arrive still coded', async () => {
    const response = await sendRaw(port, post('Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n', chunkedBody));
    expectUnified(response, 400, 'Transfer-Encoding may only be chunked.');
  });

  it('chunked alone, in any case, is read', async () => {
    const response = await sendRaw(port, post('Content-Type: application/json\r\nTransfer-Encoding: CHUNKED\r\n', chunkedBody));
    expect(response.status).toBe(200);
  });

  it('a compressed body: 415; identity is fine', async () => {
    const framed = (encoding: string): string => post(`Content-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${BODY.length}\r\n`);
    expectUnified(await sendRaw(port, framed('gzip')), 415, 'Content-Encoding must be identity: request bodies are not decompressed.');
    expect((await sendRaw(port, framed('identity'))).status).toBe(200);
  });
});

describe('CONNECT', () => {
  it('is refused with 405 and Allow, not dropped unanswered', async () => {
    const response = await sendRaw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expectUnified(response, 405, 'Method not allowed.');
    expect(response.headers.allow?.[0]).toContain('POST');
    expect(response.closed).toBe(true);
  });
});

describe('what Node would refuse itself with an empty body', () => {
  it('an HTTP/1.1 request without Host: 400 in the unified body; HTTP/1.0 needs none', async () => {
    const response = await sendRaw(port, `GET /v1/models HTTP/1.1\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expectUnified(response, 400, 'An HTTP/1.1 request must carry a Host header.');
    const old = await sendRaw(port, `GET /v1/models HTTP/1.0\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`);
    expect(old.status).toBe(200);
  });

  for (const expectation of ['', '200-ok', 'garbage']) {
    it(`Expect: ${JSON.stringify(expectation)}: 417 in the unified body, the body never read, the connection closed`, async () => {
      const response = await sendRaw(port, post(`Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\nExpect: ${expectation}\r\n`), { untilClose: true });
      expectUnified(response, 417, 'The Expect header may only be 100-continue.');
      expect(response.responses).toHaveLength(1);
      expect(response.closed).toBe(true);
    });
  }

  it('Expect: 100-continue is honoured', async () => {
    const response = await sendRaw(port, post(`Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\nExpect: 100-continue\r\n`));
    expect(response.raw).toContain('HTTP/1.1 100 Continue');
    expect(response.raw).toContain('HTTP/1.1 200 OK');
  });
});

describe('methods no route has', () => {
  it('QUERY, with or without a body, gets 405 with Allow on a path that has other methods, 404 elsewhere', async () => {
    const onModel = await sendRaw(port, `QUERY /v1/models/x HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expectUnified(onModel, 405, 'Method not allowed.');
    expect(onModel.headers.allow).toEqual(['GET, HEAD']);
    const withBody = await sendRaw(port, `QUERY /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`);
    expectUnified(withBody, 405, 'Method not allowed.');
    const nowhere = await sendRaw(port, `QUERY /..%2fetc%2fpasswd HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(nowhere.status).toBe(404);
    expect(JSON.parse(nowhere.body).error.code).toBe(404);
  });

  it('every method Node parses is answered in the unified body, never with a 5xx', async () => {
    for (const method of METHODS.filter((each) => each !== 'CONNECT')) {
      const response = await sendRaw(port, `${method} /v1/models/x HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`, { head: method === 'HEAD' });
      expect(response.status, method).toBeLessThan(500);
      expect(response.headers['x-request-id'], method).toBeDefined();
      if (response.status >= 400 && method !== 'HEAD') expect(JSON.parse(response.body).error.code, method).toBe(response.status);
    }
  });
});

describe('a client that leaves while sending its body', () => {
  it('is counted as gone, not as a failure', async () => {
    const gone = async (): Promise<number> => Number(/^lmgate_clients_gone_total (\d+)$/m.exec(await (await fetch(`${t.origin}/metrics`)).text())?.[1]);
    const before = await gone();
    expect(before).toBeGreaterThanOrEqual(0);
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(post(`Content-Type: application/json\r\nContent-Length: ${BODY.length + 100}\r\n`));
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.resetAndDestroy();
    await expect.poll(gone, { timeout: 2_000 }).toBe(before + 1);
  });
});

describe('timeouts', () => {
  // Node reports a request not received within requestTimeout as ERR_HTTP_REQUEST_TIMEOUT
  // (checked every 30 s, too slow to wait for here); its answer is the same renderer's.
  it('a request not received in time is a 408', () => {
    const err = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    const reply = renderError(classifyClientError(err), 'req_x');
    expect(reply.status).toBe(408);
    expect(reply.body).toEqual({ error: { message: 'The request was not received in time.', code: 408, request_id: 'req_x' } });
  });
});
