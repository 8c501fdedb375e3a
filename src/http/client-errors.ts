// Refusals decided before a route runs: by Node's HTTP parser (framing, header syntax,
// sizes, timeouts), by the router (bad URL encoding, over-long parameters), or by lmgate's
// reading of the head (a method no route has, a missing Host, an expectation other than
// 100-continue, a singleton header twice). Node answers some of these itself with an empty
// body unless told not to (app.ts: `requireHostHeader: false`, and the server's
// `checkExpectation` here); each is rendered by error-reply.ts like any other error, so a
// client sees one body shape whichever layer said no.
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import {
  ExpectationFailedError,
  HeadersTooLargeError,
  MalformedRequestError,
  MethodNotAllowedError,
  RequestTimeoutError,
  UnsupportedContentEncodingError,
  UriTooLongError,
  type LmgateError,
} from '../errors.js';
import { renderError } from './error-reply.js';
import { HTTP_METHODS, missError } from './error-handler.js';
import { generateRequestId } from './request-id.js';

/**
 * The longest URL served. Node's parser refuses only a request line and headers over 16 KiB
 * together (`--max-http-header-size`); a shorter URL past this is refused in checkRequestHead.
 */
const URL_TOO_LONG_AT = 8 * 1024;

/** The whole request (headers and body) must arrive within this; slow senders hold a socket. */
export const REQUEST_TIMEOUT_MS = 60_000;

/** Node's parser error: the bytes it had read of the request are in `rawPacket`. */
type ParserError = Error & { code?: string; rawPacket?: unknown };

/** What a parser error means for the client. */
export function classifyClientError(err: ParserError): LmgateError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError();
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // Node counts the request line within the header limit; a long first line is the URL.
    const packet = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : Buffer.alloc(0);
    const lineEnd = packet.indexOf('\r\n');
    const lineLength = lineEnd === -1 ? packet.length : lineEnd;
    return lineLength > URL_TOO_LONG_AT ? new UriTooLongError() : new HeadersTooLargeError();
  }
  return new MalformedRequestError({ kind: 'http' });
}

type InFlight = ServerResponse & { req: IncomingMessage };

/** The response Node is writing on this socket, if any (pipelined ones queue behind it). */
function inFlight(socket: Socket): InFlight | undefined {
  return (socket as Socket & { _httpMessage?: InFlight | null })._httpMessage ?? undefined;
}

/**
 * Fastify's `clientErrorHandler`. No request object exists for the bytes that failed, so the
 * answer is written on the socket, which is then closed: the framing after a parse error
 * cannot be trusted.
 */
export function clientErrorHandler(err: ParserError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || closing.has(socket)) return;
  const current = inFlight(socket);
  if (current?.req.complete && err.code !== 'ERR_HTTP_REQUEST_TIMEOUT') {
    // Requests received whole before the bad bytes are being answered (and charged): let
    // those answers reach the client, then close. The bad bytes get no answer of their own.
    closing.add(socket);
    socket.pause();
    closeAfterAnswers(socket, current);
    return;
  }
  // As Node's own handler: no refusal in the middle of a response already begun.
  if (socket.writable && current?.headersSent !== true) writeRefusal(socket, classifyClientError(err));
  socket.destroy();
}

/** Sockets waiting for their answers to finish before closing; the parser may report again meanwhile. */
const closing = new WeakSet<Socket>();

function closeAfterAnswers(socket: Socket, response: InFlight): void {
  // Node's own 'finish' listener runs first and hands the socket to the next queued response.
  response.once('close', () => {
    const next = inFlight(socket);
    if (next && next !== response) closeAfterAnswers(socket, next);
    else socket.destroySoon();
  });
}

/**
 * CONNECT asks for a tunnel, which lmgate does not offer. Node hands such requests to the
 * server's `connect` event, not to Fastify, and drops the socket unanswered without a listener.
 */
export function refuseConnect(_request: IncomingMessage, socket: Duplex): void {
  if (socket.writable) writeRefusal(socket, new MethodNotAllowedError([...HTTP_METHODS]));
  socket.destroy();
}

/**
 * The server's `checkExpectation`: an `Expect` other than 100-continue, which Node would
 * refuse with an empty 417. The body is not read; the connection closes after the answer.
 */
export function refuseExpectation(request: IncomingMessage, response: ServerResponse): void {
  const requestId = generateRequestId(request);
  const { status, headers, body } = renderError(new ExpectationFailedError(String(request.headers.expect)), requestId);
  response.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId });
  response.end(JSON.stringify(body));
}

function writeRefusal(socket: Duplex, err: LmgateError): void {
  const requestId = generateRequestId(NO_HEADERS);
  const { status, headers, body } = renderError(err, requestId);
  const text = JSON.stringify(body);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      `x-request-id: ${requestId}\r\n` +
      extra +
      'Connection: close\r\n\r\n' +
      text,
  );
}

const NO_HEADERS = { headers: {} } as IncomingMessage;

/** Fastify's `frameworkErrors`: the request exists, so it is answered like any error. */
export function frameworkErrors(err: Error, request: FastifyRequest, reply: FastifyReply): void {
  const { status, headers, body } = renderError(err, request.id);
  reply.code(status).headers(headers).header('x-request-id', request.id).send(body);
}

/** The methods some route is registered for: any other gets 404 or 405 before its body is read. */
const SERVED_METHODS: ReadonlySet<string> = new Set(HTTP_METHODS);

/** Headers that must appear at most once: two of them means two readers may disagree. */
const SINGLETON_HEADERS = ['Authorization', 'Host', 'Content-Type'];
const SINGLETON_KEYS = SINGLETON_HEADERS.map((name) => name.toLowerCase());

/**
 * The root `onRequest` check of what Node's parser lets through but lmgate cannot read
 * unambiguously, or will not, before anything reads a key:
 * - a method no route has (QUERY, PROPFIND...): 405 or 404, before the framework reads a body;
 * - an HTTP/1.1 request without Host;
 * - a URL over 8 KiB, which Node lets through while the headers leave it room;
 * - a repeated singleton header: Node keeps the first and drops the rest, while a proxy in
 *   front may read the last;
 * - a transfer coding besides chunked (`gzip, chunked`): Node removes the chunking and
 *   hands over the body still coded;
 * - a compressed body (Content-Encoding): it would be parsed as if it were not.
 */
export const checkRequestHead: onRequestHookHandler = (request, _reply, done) => {
  const raw = request.raw;
  if (!SERVED_METHODS.has(raw.method!)) return done(missError(request));
  if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) return done(new MalformedRequestError({ kind: 'missing_host' }));
  if (raw.url!.length > URL_TOO_LONG_AT) return done(new UriTooLongError());
  const rawHeaders = raw.rawHeaders;
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    // Cheap length test first: most header names match none of the three.
    if (name.length !== 4 && name.length !== 12 && name.length !== 13) continue;
    const index = SINGLETON_KEYS.indexOf(name.toLowerCase());
    if (index === -1) continue;
    const bit = 1 << index;
    if (seen & bit) return done(new MalformedRequestError({ kind: 'duplicate_header', header: SINGLETON_HEADERS[index]! }));
    seen |= bit;
  }
  const { headers } = request;
  const transfer = headers['transfer-encoding'];
  if (transfer !== undefined && transfer.toLowerCase() !== 'chunked') {
    return done(new MalformedRequestError({ kind: 'transfer_coding', coding: transfer }));
  }
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return done(new UnsupportedContentEncodingError(encoding));
  done();
};
