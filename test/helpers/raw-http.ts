// Raw HTTP/1.1 over a TCP socket, for requests no well-behaved client would send: broken
// framing, repeated headers, bytes that are not HTTP at all.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string[]>;
  body: string;
  /** The server closed the connection after answering. */
  closed: boolean;
  /** Everything received, for messages. */
  raw: string;
}

export interface RawOptions {
  /** Give up (and report what arrived) after this long; default 5 s. */
  timeoutMs?: number;
  /** Written one after another, each flushed, to split a request across packets. */
  chunks?: (string | Buffer)[];
  /** Wait this long between chunks. */
  chunkGapMs?: number;
  /** Read until the server closes (to see every response), not only the first response. */
  untilClose?: boolean;
}

/** Sends `request` and reads the first response: until the connection closes, or a whole response arrived. */
export function sendRaw(port: number, request: string | Buffer, options: RawOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      const raw = Buffer.concat(received).toString('latin1');
      const parsed = parseResponse(raw);
      if ((!parsed || options.untilClose) && !closed) return; // wait for more
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (!parsed) reject(new Error(`no HTTP response; received ${JSON.stringify(raw.slice(0, 200))}`));
      else resolve({ ...parsed, closed, raw });
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no complete response in ${options.timeoutMs ?? 5000} ms; received ${JSON.stringify(Buffer.concat(received).toString('latin1').slice(0, 200))}`));
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
      // A complete response followed by a close tells whether the server hung up; give
      // the close a moment to arrive before settling without it.
      if (parseResponse(Buffer.concat(received).toString('latin1'))) setTimeout(() => finish(socket.readableEnded), 50);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

/** A complete response with Content-Length (the only kind error answers use), or undefined. */
function parseResponse(raw: string): Omit<RawResponse, 'closed' | 'raw'> | undefined {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd === -1) return undefined;
  const [statusLine, ...lines] = raw.slice(0, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!Number.isInteger(status)) return undefined;
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  const length = Number(headers['content-length']?.[0] ?? NaN);
  const bodyBytes = Buffer.from(raw.slice(headEnd + 4), 'latin1');
  if (Number.isFinite(length)) {
    if (bodyBytes.length < length) return undefined;
    return { status, headers, body: bodyBytes.subarray(0, length).toString('utf8') };
  }
  if (headers['transfer-encoding']?.[0] === 'chunked') {
    const body = decodeChunked(bodyBytes.toString('latin1'));
    return body === undefined ? undefined : { status, headers, body: Buffer.from(body, 'latin1').toString('utf8') };
  }
  return undefined;
}

function decodeChunked(text: string): string | undefined {
  let body = '';
  let at = 0;
  for (;;) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(text.slice(at, lineEnd), 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) return body;
    if (text.length < lineEnd + 2 + size + 2) return undefined;
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}
