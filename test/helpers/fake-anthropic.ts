// Anthropic's API, which tests can't call, faked on loopback: a real node:http server
// speaking the Messages API's wire protocol (POST /v1/messages, JSON answers, SSE with
// Anthropic's event names, its error bodies), typed by the official SDK's own types.
import type Anthropic from '@anthropic-ai/sdk';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeAnthropicBehaviour {
  /** Answer with this status and Anthropic's error body of `errorType`. */
  status?: number;
  errorType?: string;
  errorMessage?: string;
  /** The text, one piece per text_delta. */
  pieces?: string[];
  /** A tool call after the text; its JSON is streamed in `jsonPieces` pieces. */
  toolUse?: { id: string; name: string; input: Record<string, unknown> };
  stopReason?: Anthropic.StopReason;
  /** Streaming: wait this long before each delta. */
  deltaDelayMs?: number;
  /** Streaming: after this many text deltas, send an `error` event of `errorType` and end. */
  errorEventAfter?: number;
  /** The stop sequence met (with stopReason 'stop_sequence'). */
  stopSequence?: string;
  /** Cache figures reported instead of ANTHROPIC_USAGE's: reads, writes, and writes by lifetime. */
  cache?: { read: number; written: number; written1h?: number };
}

export interface RecordedAnthropicRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** True once the connection has gone before the answer ended. */
  closed: Promise<boolean>;
}

export interface FakeAnthropic {
  /** Base URL ending in /v1. */
  url: string;
  hostPort: string;
  requests: RecordedAnthropicRequest[];
  behave(behaviour: FakeAnthropicBehaviour): void;
  close(): Promise<void>;
}

export const ANTHROPIC_PIECES = ['Bonjour', ' from', ' Claude', '.'];
/** Numbers no tokenizer would give for the pieces: charges must come from these. */
export const ANTHROPIC_USAGE = { input_tokens: 211, output_tokens: 37, cache_read_input_tokens: 4 };
/** What /messages/count_tokens answers. */
export const ANTHROPIC_COUNT = 4_242;

export async function startFakeAnthropic(initial: FakeAnthropicBehaviour = {}): Promise<FakeAnthropic> {
  let behaviour = initial;
  const requests: RecordedAnthropicRequest[] = [];
  const server = createServer((req, res) => {
    let resolveClosed: (early: boolean) => void = () => {};
    const closed = new Promise<boolean>((resolve) => (resolveClosed = resolve));
    res.on('close', () => resolveClosed(!res.writableFinished));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, closed });
      if (req.url?.endsWith('/messages/count_tokens')) return countTokens(res, body, behaviour);
      void answer(res, body, behaviour);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    hostPort: `127.0.0.1:${port}`,
    requests,
    behave: (next) => {
      behaviour = next;
    },
    close: () => closeServer(server),
  };
}

/** Anthropic's count: ANTHROPIC_COUNT tokens, or the error of `status`. It refuses what count_tokens does not take. */
function countTokens(res: ServerResponse, body: Record<string, unknown>, behaviour: FakeAnthropicBehaviour): void {
  const refused = behaviour.status ?? ('max_tokens' in body || 'stream' in body ? 400 : undefined);
  res.writeHead(refused ?? 200, { 'content-type': 'application/json' });
  if (refused !== undefined) return void res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'not counted' } }));
  res.end(JSON.stringify({ input_tokens: ANTHROPIC_COUNT }));
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function message(model: string, content: Anthropic.ContentBlock[], stopReason: Anthropic.StopReason | null, outputTokens: number, behaviour: FakeAnthropicBehaviour): Anthropic.Message {
  const cache = behaviour.cache ?? { read: ANTHROPIC_USAGE.cache_read_input_tokens, written: 0 };
  return {
    id: 'msg_01FakeAnthropicAnswer',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? (behaviour.stopSequence ?? null) : null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: {
      input_tokens: ANTHROPIC_USAGE.input_tokens,
      output_tokens: outputTokens,
      cache_creation_input_tokens: cache.written,
      cache_read_input_tokens: cache.read,
      cache_creation: cache.written1h === undefined ? null : { ephemeral_5m_input_tokens: cache.written - cache.written1h, ephemeral_1h_input_tokens: cache.written1h },
      inference_geo: null,
      server_tool_use: null,
      service_tier: 'standard',
      output_tokens_details: null,
      speed: null,
    },
  };
}

async function answer(res: ServerResponse, request: Record<string, unknown>, behaviour: FakeAnthropicBehaviour): Promise<void> {
  if (behaviour.status !== undefined) {
    const body: Anthropic.ErrorResponse = {
      type: 'error',
      error: { type: (behaviour.errorType ?? 'api_error') as 'api_error', message: behaviour.errorMessage ?? `fake anthropic says ${behaviour.status}` },
      request_id: 'req_fake',
    };
    res.writeHead(behaviour.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    return;
  }
  const model = String(request.model);
  const pieces = behaviour.pieces ?? ANTHROPIC_PIECES;
  const tool = behaviour.toolUse;
  const stopReason = behaviour.stopReason ?? (tool ? 'tool_use' : 'end_turn');
  if (request.stream !== true) {
    const content: Anthropic.ContentBlock[] = [{ type: 'text', text: pieces.join(''), citations: null }];
    if (tool) content.push({ type: 'tool_use', ...tool, caller: { type: 'direct' } } as Anthropic.ToolUseBlock);
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake' });
    res.end(JSON.stringify(message(model, content, stopReason, ANTHROPIC_USAGE.output_tokens, behaviour)));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Anthropic.RawMessageStreamEvent | { type: 'ping' } | Anthropic.ErrorResponse): void => {
    if (!res.destroyed) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  };
  send({ type: 'message_start', message: message(model, [], null, 1, behaviour) });
  send({ type: 'ping' });
  send({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } });
  let sent = 0;
  for (const piece of pieces) {
    if (behaviour.deltaDelayMs) await delay(behaviour.deltaDelayMs);
    if (res.destroyed) return;
    if (behaviour.errorEventAfter !== undefined && sent >= behaviour.errorEventAfter) {
      send({ type: 'error', error: { type: (behaviour.errorType ?? 'overloaded_error') as 'overloaded_error', message: 'Overloaded' }, request_id: null });
      res.end();
      return;
    }
    send({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } });
    sent++;
  }
  send({ type: 'content_block_stop', index: 0 });
  if (tool) {
    send({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } as Anthropic.ToolUseBlock });
    const json = JSON.stringify(tool.input);
    const third = Math.ceil(json.length / 3);
    for (const part of ['', json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)]) {
      send({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: part } });
    }
    send({ type: 'content_block_stop', index: 1 });
  }
  send({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: stopReason === 'stop_sequence' ? (behaviour.stopSequence ?? null) : null, stop_details: null, container: null },
    usage: {
      output_tokens: ANTHROPIC_USAGE.output_tokens,
      input_tokens: ANTHROPIC_USAGE.input_tokens,
      cache_creation_input_tokens: behaviour.cache?.written ?? 0,
      cache_read_input_tokens: behaviour.cache?.read ?? ANTHROPIC_USAGE.cache_read_input_tokens,
      server_tool_use: null,
      output_tokens_details: null,
    },
  } as Anthropic.RawMessageDeltaEvent);
  send({ type: 'message_stop' });
  res.end();
}
