// Raw HTTP/1.1 over a TCP socket, for requests no well-behaved client would send: broken
// framing, repeated headers, bytes that are not HTTP at all.
import { connect } from 'node:net';

export interface ParsedResponse {
  status: number;
  headers: Record<string, string[]>;
  body: string;
}

export interface RawResponse extends ParsedResponse {
  /** The server closed the connection. */
  closed: boolean;
  /** Every complete response received, in order (pipelining), the first included. */
  responses: ParsedResponse[];
  /** Everything received, for messages. */
  raw: string;
}

export interface RawOptions {
  /** Give up after this long; default 5 s. */
  timeoutMs?: number;
  /** Written one after another, each flushed, to split a request across packets. */
  chunks?: (string | Buffer)[];
  /** Wait this long between chunks. */
  chunkGapMs?: number;
  /** Read until the server closes (to see every response), not only the first response. */
  untilClose?: boolean;
  /** Settle once this many responses arrived (default 1). */
  responses?: number;
  /** The first request is HEAD, so its response has no body. */
  head?: boolean;
  /** After the last expected response, wait this long for the server to close (default 50 ms; 0 settles at once). */
  closeWaitMs?: number;
}

/** Sends `request` and reads responses until enough arrived, the server closes, or the timeout (which rejects). */
export function sendRaw(port: number, request: string | Buffer, options: RawOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    let lingering: NodeJS.Timeout | undefined;
    const parse = (): { raw: string; responses: ParsedResponse[] } => {
      const raw = Buffer.concat(received).toString('latin1');
      return { raw, responses: parseResponses(raw, options.head ?? false) };
    };
    const settle = (closed: boolean): void => {
      if (settled) return;
      const { raw, responses } = parse();
      settled = true;
      clearTimeout(timer);
      clearTimeout(lingering);
      socket.destroy();
      if (responses.length === 0) reject(new Error(`no HTTP response before the connection closed; received ${JSON.stringify(raw.slice(0, 200))}`));
      else resolve({ ...responses[0]!, responses, closed, raw });
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(new Error(`no complete response in ${options.timeoutMs ?? 5000} ms; received ${JSON.stringify(parse().raw.slice(0, 200))}`));
    }, options.timeoutMs ?? 5000);
    socket.on('connect', async () => {
      for (const chunk of options.chunks ?? [request]) {
        if (socket.destroyed) return;
        socket.write(chunk);
        if (options.chunkGapMs) await new Promise((resolve) => setTimeout(resolve, options.chunkGapMs));
      }
    });
    socket.on('data', (data) => {
      received.push(data);
      if (options.untilClose || lingering) return;
      // Enough answers: give a close that follows them a moment, to report whether the server hung up.
      if (parse().responses.length < (options.responses ?? 1)) return;
      if (options.closeWaitMs === 0) settle(socket.readableEnded);
      else lingering = setTimeout(() => settle(socket.readableEnded), options.closeWaitMs ?? 50);
    });
    socket.on('end', () => settle(true));
    socket.on('close', () => settle(true));
    socket.on('error', () => settle(true));
  });
}

/** The complete responses at the start of `raw`, interim (1xx) ones skipped. */
export function parseResponses(raw: string, headFirst: boolean): ParsedResponse[] {
  const responses: ParsedResponse[] = [];
  let at = 0;
  for (;;) {
    const parsed = parseOne(raw, at, headFirst && responses.length === 0);
    if (!parsed) return responses;
    at = parsed.end;
    if (parsed.response.status >= 200) responses.push(parsed.response);
  }
}

function parseOne(raw: string, start: number, head: boolean): { response: ParsedResponse; end: number } | undefined {
  const headEnd = raw.indexOf('\r\n\r\n', start);
  if (headEnd === -1) return undefined;
  const [statusLine, ...lines] = raw.slice(start, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  const bodyStart = headEnd + 4;
  if (head || status < 200 || status === 204 || status === 304) return { response: { status, headers, body: '' }, end: bodyStart };
  const length = Number(headers['content-length']?.[0] ?? NaN);
  if (Number.isFinite(length)) {
    if (raw.length < bodyStart + length) return undefined;
    return { response: { status, headers, body: utf8(raw.slice(bodyStart, bodyStart + length)) }, end: bodyStart + length };
  }
  if (headers['transfer-encoding']?.[0] === 'chunked') {
    const decoded = decodeChunked(raw, bodyStart);
    return decoded && { response: { status, headers, body: utf8(decoded.body) }, end: decoded.end };
  }
  return undefined;
}

function decodeChunked(raw: string, start: number): { body: string; end: number } | undefined {
  let body = '';
  let at = start;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) {
      const end = raw.indexOf('\r\n\r\n', lineEnd);
      return end === -1 ? undefined : { body, end: end + 4 };
    }
    if (raw.length < lineEnd + 2 + size + 2) return undefined;
    body += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** The response was read as latin1 (one char per byte); bodies are UTF-8. */
function utf8(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}
