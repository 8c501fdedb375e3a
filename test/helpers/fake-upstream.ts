// A model server we can't run in tests, faked on loopback: a real node:http server that
// speaks OpenAI's chat wire format (JSON and SSE), its /embeddings and its Responses API
// (/responses, typed by the official client's own types), and can be told to misbehave.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type OpenAI from 'openai';

export interface FakeUpstreamBehaviour {
  /** Answer with this status instead of a completion (500, 429, 400...). */
  status?: number;
  /** Sent as the error body's `error.message` with a non-2xx status. */
  errorMessage?: string;
  /** Retry-After header, with status 429. */
  retryAfter?: string;
  /** Send a broken body: truncated JSON, or an SSE event whose data is not JSON. */
  malformed?: boolean;
  /** Wait this long before the status line. */
  firstByteDelayMs?: number;
  /** Streaming: send the 200 headers, then destroy the socket before any event. */
  dropAfterHeaders?: boolean;
  /** Streaming: destroy the socket after this many content chunks. */
  dropAfterChunks?: number;
  /** Never report usage (some Ollama/llama.cpp versions). */
  noUsage?: boolean;
  /** The upstream's own `usage.cost` (OpenRouter reports one, in dollars). */
  usageCost?: number;
  /** The answer's content, one piece per streamed chunk. */
  pieces?: string[];
  /** Streaming: wait this long between chunks (a slow trickle). */
  chunkDelayMs?: number;
  /** Streaming: line ending of the SSE framing. */
  lineEnding?: '\n' | '\r\n';
  /** Streaming: write the SSE bytes in fragments of this size (events cut mid-line). */
  fragmentBytes?: number;
  /** The model named in answers, instead of the one asked for (OpenAI names a dated snapshot). */
  reportedModel?: string;
  /** Streaming: JSON with Python's default separators (`", "`, `": "`), as json.dumps writes it. */
  spacedJson?: boolean;
  /** Streaming: this many choices (n), each piece sent for each; the first finishes with 'stop' before the others with 'length'. */
  choices?: number;
  /** Streaming /responses: after this many text deltas (0: before any output item), an `error` event, and the end. */
  errorEventAfter?: number;
  /** The usage object reported instead of FAKE_USAGE (token kinds in OpenAI's `*_details`). */
  usage?: Record<string, unknown>;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** The body as received. */
  text: string;
  /** Resolves when the connection for this request is gone; true if before the answer ended. */
  closed: Promise<boolean>;
}

export interface FakeUpstream {
  /** Base URL ending in /v1. */
  url: string;
  /** host:port, to check it never leaks. */
  hostPort: string;
  requests: RecordedRequest[];
  /** Replaces the behaviour for the following requests. */
  behave(behaviour: FakeUpstreamBehaviour): void;
  close(): Promise<void>;
}

export const DEFAULT_PIECES = ['Hello', ' from', ' the', ' upstream', '.'];
/** The usage the fake reports: numbers no tokenizer would produce for DEFAULT_PIECES. */
export const FAKE_USAGE = { prompt_tokens: 101, completion_tokens: 57, total_tokens: 158 };

export async function startFakeUpstream(initial: FakeUpstreamBehaviour = {}): Promise<FakeUpstream> {
  let behaviour = initial;
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    let closedEarly: (early: boolean) => void = () => {};
    const closed = new Promise<boolean>((resolve) => (closedEarly = resolve));
    res.on('close', () => closedEarly(!res.writableFinished));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(text) as Record<string, unknown>;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, text, closed });
      if (req.url?.endsWith('/embeddings') && behaviour.status === undefined) return answerEmbeddings(res, body);
      if (req.url?.endsWith('/responses')) return void answerResponses(res, body, behaviour);
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

/** The usage the fake reports for embeddings. */
export const FAKE_EMBEDDING_TOKENS = 23;
/** The vector the fake gives every input. */
export const FAKE_VECTOR = [0.6, 0.8, 0];

function answerEmbeddings(res: ServerResponse, request: Record<string, unknown>): void {
  const inputs = Array.isArray(request.input) && typeof request.input[0] !== 'number' ? request.input : [request.input];
  const embedding = (): unknown => {
    if (request.encoding_format !== 'base64') return FAKE_VECTOR;
    const bytes = Buffer.alloc(FAKE_VECTOR.length * 4);
    FAKE_VECTOR.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
    return bytes.toString('base64');
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      object: 'list',
      data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: embedding() })),
      model: request.model,
      usage: { prompt_tokens: FAKE_EMBEDDING_TOKENS, total_tokens: FAKE_EMBEDDING_TOKENS },
    }),
  );
}

/** A base URL on which nothing listens: connections are refused. */
export async function refusingUpstreamUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return `http://127.0.0.1:${port}/v1`;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** What every path does first: the delay, or the error status it was told to answer. True: answered. */
async function answeredEarly(res: ServerResponse, behaviour: FakeUpstreamBehaviour): Promise<boolean> {
  if (behaviour.firstByteDelayMs) {
    await delay(behaviour.firstByteDelayMs);
    if (res.destroyed) return true;
  }
  if (behaviour.status === undefined || behaviour.status < 300) return false;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (behaviour.retryAfter !== undefined) headers['retry-after'] = behaviour.retryAfter;
  res.writeHead(behaviour.status, headers);
  res.end(
    JSON.stringify({
      error: { message: behaviour.errorMessage ?? `fake upstream says ${behaviour.status}`, type: 'invalid_request_error', param: null, code: null },
    }),
  );
  return true;
}

async function answer(res: ServerResponse, request: Record<string, unknown>, behaviour: FakeUpstreamBehaviour): Promise<void> {
  if (await answeredEarly(res, behaviour)) return;
  const model = behaviour.reportedModel ?? String(request.model);
  const pieces = behaviour.pieces ?? DEFAULT_PIECES;
  if (request.stream === true) return streamAnswer(res, request, model, pieces, behaviour);

  res.writeHead(200, { 'content-type': 'application/json' });
  if (behaviour.malformed) {
    res.end('{"id":"chatcmpl-fake","object":"chat.completion","choices":[{"index":0,');
    return;
  }
  const completion: Record<string, unknown> = {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: pieces.join('') }, logprobs: null, finish_reason: 'stop' }],
    system_fingerprint: 'fp_fake',
  };
  if (!behaviour.noUsage) completion.usage = usageOf(behaviour);
  res.end(JSON.stringify(completion));
}

function usageOf(behaviour: FakeUpstreamBehaviour): Record<string, unknown> {
  const usage = behaviour.usage ?? FAKE_USAGE;
  return behaviour.usageCost === undefined ? usage : { ...usage, cost: behaviour.usageCost };
}

async function streamAnswer(
  res: ServerResponse,
  request: Record<string, unknown>,
  model: string,
  pieces: string[],
  behaviour: FakeUpstreamBehaviour,
): Promise<void> {
  const eol = behaviour.lineEnding ?? '\n';
  const streamOptions = request.stream_options as { include_usage?: boolean } | undefined;
  const withUsage = streamOptions?.include_usage === true && !behaviour.noUsage;
  const choiceCount = behaviour.choices ?? 1;
  const chunk = (choices: unknown[], usage?: unknown): string => {
    const body: Record<string, unknown> = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_fake', choices };
    // OpenAI: with include_usage every chunk carries "usage": null but the last.
    if (withUsage) body.usage = usage ?? null;
    return `data: ${behaviour.spacedJson ? spacedJson(body) : JSON.stringify(body)}${eol}${eol}`;
  };
  const write = async (text: string): Promise<void> => {
    if (res.destroyed) return;
    const size = behaviour.fragmentBytes;
    if (size === undefined) {
      res.write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    for (let at = 0; at < bytes.length; at += size) {
      res.write(bytes.subarray(at, at + size));
      await delay(0);
    }
  };

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (behaviour.dropAfterHeaders) {
    res.flushHeaders();
    setTimeout(() => res.socket?.destroy(), 10);
    return;
  }
  await write(`: keep-alive comment${eol}${eol}`);
  await write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]));
  let sent = 0;
  for (const piece of pieces) {
    if (!(await goesOn(res, behaviour, sent))) return;
    if (behaviour.malformed && sent === 1) {
      await write(`data: {"id":"chatcmpl-fake","choices":[{${eol}${eol}`);
      sent++;
      continue;
    }
    for (let index = 0; index < choiceCount; index++) await write(chunk([{ index, delta: { content: piece }, logprobs: null, finish_reason: null }]));
    sent++;
  }
  for (let index = 0; index < choiceCount; index++) await write(chunk([{ index, delta: {}, logprobs: null, finish_reason: index === 0 ? 'stop' : 'length' }]));
  if (withUsage) await write(chunk([], usageOf(behaviour)));
  await write(`data: [DONE]${eol}${eol}`);
  res.end();
}

/** The usage the fake reports on /responses: numbers no tokenizer would produce for the pieces. */
export const FAKE_RESPONSE_USAGE = { input_tokens: 131, output_tokens: 43 };
/** The function call the fake's /responses makes when the request offers tools. */
export const FAKE_FUNCTION_CALL = { call_id: 'call_fake', name: 'get_weather', arguments: '{"city":"Paris"}' };

type ResponseBody = Omit<OpenAI.Responses.Response, 'output_text'>;
/** An event as the fake writes it, before its sequence number. */
type ResponseEvent<E = OpenAI.Responses.ResponseStreamEvent> = E extends unknown ? Omit<E, 'sequence_number'> : never;

/** The Responses API: a response holding one message (and a function call when tools were offered), whole or as its typed events. */
async function answerResponses(res: ServerResponse, request: Record<string, unknown>, behaviour: FakeUpstreamBehaviour): Promise<void> {
  if (await answeredEarly(res, behaviour)) return;
  const pieces = behaviour.pieces ?? DEFAULT_PIECES;
  const offersTools = Array.isArray(request.tools) && request.tools.length > 0;
  const message = (status: 'in_progress' | 'completed', text: string | null): OpenAI.Responses.ResponseOutputMessage => ({
    id: 'msg_fake',
    type: 'message',
    status,
    role: 'assistant',
    content: text === null ? [] : [{ type: 'output_text', text, annotations: [], logprobs: [] }],
  });
  const functionCall: OpenAI.Responses.ResponseFunctionToolCall = { id: 'fc_fake', type: 'function_call', status: 'completed', ...FAKE_FUNCTION_CALL };
  const response = (status: 'in_progress' | 'completed', output: OpenAI.Responses.ResponseOutputItem[]): ResponseBody => ({
    id: 'resp_fake',
    object: 'response',
    created_at: 1_700_000_000,
    status,
    error: null,
    incomplete_details: null,
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : null,
    metadata: {},
    model: behaviour.reportedModel ?? String(request.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    ...(status === 'completed' && !behaviour.noUsage
      ? { usage: { ...FAKE_RESPONSE_USAGE, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: FAKE_RESPONSE_USAGE.input_tokens + FAKE_RESPONSE_USAGE.output_tokens } }
      : {}),
  });
  const finalOutput = [message('completed', pieces.join('')), ...(offersTools ? [functionCall] : [])];
  if (request.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(behaviour.malformed ? '{"id":"resp_fake","object":"response","output":[' : JSON.stringify(response('completed', finalOutput)));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sequence = 0;
  // OpenAI names each event and writes its type first.
  const send = (event: ResponseEvent): void => {
    if (!res.destroyed) res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
  };
  const at = { item_id: 'msg_fake', output_index: 0, content_index: 0 };
  const fail = (): void => {
    send({ type: 'error', code: 'server_error', message: 'The server had an error while processing your request.', param: null });
    res.end();
  };
  send({ type: 'response.created', response: response('in_progress', []) as OpenAI.Responses.Response });
  send({ type: 'response.in_progress', response: response('in_progress', []) as OpenAI.Responses.Response });
  if (behaviour.errorEventAfter === 0) return fail();
  send({ type: 'response.output_item.added', output_index: 0, item: message('in_progress', null) });
  send({ type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [] } });
  let sent = 0;
  for (const piece of pieces) {
    if (!(await goesOn(res, behaviour, sent))) return;
    if (behaviour.errorEventAfter !== undefined && sent >= behaviour.errorEventAfter) return fail();
    send({ type: 'response.output_text.delta', ...at, delta: piece, logprobs: [] });
    sent++;
  }
  const text = pieces.join('');
  send({ type: 'response.output_text.done', ...at, text, logprobs: [] });
  send({ type: 'response.content_part.done', ...at, part: { type: 'output_text', text, annotations: [] } });
  send({ type: 'response.output_item.done', output_index: 0, item: message('completed', text) });
  if (offersTools) {
    send({ type: 'response.output_item.added', output_index: 1, item: { ...functionCall, status: 'in_progress', arguments: '' } });
    const args = FAKE_FUNCTION_CALL.arguments;
    const half = Math.ceil(args.length / 2);
    for (const delta of [args.slice(0, half), args.slice(half)]) send({ type: 'response.function_call_arguments.delta', item_id: 'fc_fake', output_index: 1, delta });
    send({ type: 'response.function_call_arguments.done', item_id: 'fc_fake', output_index: 1, name: FAKE_FUNCTION_CALL.name, arguments: args });
    send({ type: 'response.output_item.done', output_index: 1, item: functionCall });
  }
  send({ type: 'response.completed', response: response('completed', finalOutput) as OpenAI.Responses.Response });
  res.end();
}

/** Before each streamed piece: the trickle's delay, then whether the stream goes on (not when the connection is gone, or dropped as told). */
async function goesOn(res: ServerResponse, behaviour: FakeUpstreamBehaviour, sent: number): Promise<boolean> {
  if (behaviour.chunkDelayMs) await delay(behaviour.chunkDelayMs);
  if (res.destroyed) return false;
  if (behaviour.dropAfterChunks !== undefined && sent >= behaviour.dropAfterChunks) {
    // end(), not destroy(): what was written goes out first, then the connection closes in
    // the middle of the chunked body. Node 24 holds a response's writes until the tick
    // ends, and the socket's end() bypasses them: they go out first.
    await new Promise((resolve) => setImmediate(resolve));
    res.socket?.end();
    return false;
  }
  return true;
}

/** JSON as Python's json.dumps writes it by default. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${spacedJson(item)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
