import { afterEach, describe, expect, it } from 'vitest';
import { statusOf } from '../../src/http/error-reply.js';
import type { ChatRequest } from '../../src/chat/chat-request.js';
import {
  BadUpstreamError,
  NoBackendAvailableError,
  UpstreamRejectedError,
  UpstreamTimeoutError,
  type LmgateError,
} from '../../src/errors.js';
import type { Usage } from '../../src/billing/usage.js';
import type { BackendCall, ChunkSink, StreamResult } from '../../src/models/backend.js';
import {
  createOpenAICompatibleBackend,
  type OpenAICompatibleBackend,
  type UpstreamDeployment,
} from '../../src/models/openai-compatible-backend.js';
import { countTextTokens } from '../../src/models/tokens.js';
import { clientLinkOf } from '../helpers/client-link.js';
import {
  DEFAULT_PIECES,
  FAKE_USAGE,
  refusingUpstreamUrl,
  startFakeUpstream,
  type FakeUpstream,
  type FakeUpstreamBehaviour,
} from '../helpers/fake-upstream.js';

const API_KEY = 'sk-upstream-secret-0123456789';
const MODEL_ID = 'lmgate-llama';
const PROMPT_TOKENS = 9;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function upstream(behaviour: FakeUpstreamBehaviour = {}): Promise<FakeUpstream> {
  const fake = await startFakeUpstream(behaviour);
  cleanups.push(() => fake.close());
  return fake;
}

function deployment(url: string, overrides: Partial<UpstreamDeployment> = {}): UpstreamDeployment {
  return {
    url,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    apiKey: API_KEY,
    weight: 1,
    maxConcurrent: 8,
    timeouts: { connectMs: 2000, firstByteMs: 5000, idleMs: 5000, totalMs: 20_000 },
    circuitBreaker: { failureThreshold: 3, cooldownMs: 5000, maxCooldownMs: 60_000 },
    ...overrides,
  };
}

/** A backend that always picks the first deployment with room (random() = 0). */
function backendFor(deployments: UpstreamDeployment[]): OpenAICompatibleBackend {
  const backend = createOpenAICompatibleBackend({ deployments, random: () => 0 });
  cleanups.push(() => backend.close());
  return backend;
}

function call(options: { stream?: boolean; includeUsage?: boolean; signal?: AbortSignal; extra?: Record<string, unknown> } = {}): BackendCall {
  const request: ChatRequest = {
    model: MODEL_ID,
    messages: [{ role: 'user', content: 'Say hello' }],
    ...(options.stream ? { stream: true } : {}),
    ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}),
    ...options.extra,
  };
  return {
    request,
    modelId: MODEL_ID,
    promptTokens: PROMPT_TOKENS,
    maxOutputTokens: 1000,
    includeUsage: options.includeUsage ?? false,
    chargeMicros: testCharge,
    client: clientLinkOf(options.signal),
  };
}

/** The charge the test calls report: 3 micro-credits per prompt token, 7 per completion token. */
function testCharge({ promptTokens, completionTokens }: Usage): number {
  return promptTokens * 3 + completionTokens * 7;
}

/** The usage a client is shown: the counts and lmgate's cost in credits. */
function shownUsage(promptTokens: number, completionTokens: number): Record<string, number> {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens, cost: testCharge({ promptTokens, completionTokens }) / 1_000_000 };
}

interface CollectingSink extends ChunkSink {
  chunks: Record<string, unknown>[];
  content(): string;
}

function collectingSink(onChunk?: (count: number) => void): CollectingSink {
  const chunks: Record<string, unknown>[] = [];
  return {
    chunks,
    send(json) {
      chunks.push(JSON.parse(json) as Record<string, unknown>);
      onChunk?.(chunks.length);
      return true;
    },
    drained: () => Promise.resolve(),
    content() {
      let text = '';
      for (const chunk of chunks) {
        const choices = chunk.choices as { delta?: { content?: string } }[];
        for (const choice of choices) text += choice.delta?.content ?? '';
      }
      return text;
    },
  };
}

/** A finished stream relayed whole: the upstream's usage billed, none shown, lmgate's model id on every chunk. */
function expectWholeStreamWithoutUsage(result: StreamResult, sink: CollectingSink, pieces: string[]): void {
  expect(result).toEqual({ usage: { promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens }, finishReason: 'stop' });
  expect(sink.content()).toBe(pieces.join(''));
  // role chunk, one per piece, finish chunk
  expect(sink.chunks).toHaveLength(pieces.length + 2);
  for (const chunk of sink.chunks) {
    expect(chunk.model).toBe(MODEL_ID);
    expect(chunk).not.toHaveProperty('usage');
  }
}

async function rejection(promise: Promise<unknown>): Promise<LmgateError> {
  try {
    await promise;
  } catch (err) {
    return err as LmgateError;
  }
  throw new Error('expected the call to fail');
}

/** Everything a client could see of an error: nothing of the upstream's address or key. */
function expectNoSecrets(err: LmgateError, ...hostPorts: string[]): void {
  for (const secret of [API_KEY, ...hostPorts]) expect(err.message).not.toContain(secret);
}

describe('non-streaming', () => {
  it('returns the upstream answer with lmgate model id and the upstream usage', async () => {
    const fake = await upstream();
    const backend = backendFor([deployment(fake.url)]);

    const result = await backend.complete(call({ extra: { temperature: 0.2, vendor_knob: { top_k: 5 } } }));

    const body = JSON.parse(result.body) as Record<string, unknown>;
    expect(body.model).toBe(MODEL_ID);
    expect(body.object).toBe('chat.completion');
    expect(body.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: DEFAULT_PIECES.join('') }, logprobs: null, finish_reason: 'stop' },
    ]);
    expect(result.usage).toEqual({ promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens });
    expect(body.usage).toEqual(shownUsage(FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens));
    expect(result.finishReason).toBe('stop');

    expect(fake.requests).toHaveLength(1);
    const received = fake.requests[0]!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.body).toEqual({
      model: 'meta-llama/Llama-3.1-8B-Instruct',
      messages: [{ role: 'user', content: 'Say hello' }],
      temperature: 0.2,
      vendor_knob: { top_k: 5 },
    });
  });

  it('sends no authorization header when the deployment has no key', async () => {
    const fake = await upstream();
    const backend = backendFor([deployment(fake.url, { apiKey: undefined })]);
    await backend.complete(call());
    expect(fake.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('counts completion tokens with the tokenizer when the upstream reports no usage', async () => {
    const fake = await upstream({ noUsage: true });
    const backend = backendFor([deployment(fake.url)]);
    const result = await backend.complete(call());
    const expected = { promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(DEFAULT_PIECES.join('')) };
    expect(result.usage).toEqual({ ...expected, basis: 'counted' });
    expect((JSON.parse(result.body) as { usage: unknown }).usage).toEqual(shownUsage(expected.promptTokens, expected.completionTokens));
  });

  it('a slow answer beyond the total limit is a 504', async () => {
    const fake = await upstream({ firstByteDelayMs: 2000 });
    const backend = backendFor([deployment(fake.url, { timeouts: { connectMs: 1000, firstByteMs: 100, idleMs: 1000, totalMs: 300 } })]);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect(statusOf(err)).toBe(504);
    expect(await fake.requests[0]!.closed).toBe(true);
  });

  it('rejects when the client aborts, and the upstream sees the connection close', async () => {
    const fake = await upstream({ firstByteDelayMs: 5000 });
    const backend = backendFor([deployment(fake.url)]);
    const client = new AbortController();
    const pending = backend.complete(call({ signal: client.signal }));
    await waitFor(() => fake.requests.length === 1);
    client.abort();
    await expect(pending).rejects.toThrow();
    expect(await fake.requests[0]!.closed).toBe(true);
  });
});

describe('streaming', () => {
  it('forwards the chunks in order with lmgate model id and hides the usage the client did not ask for', async () => {
    const fake = await upstream();
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true, extra: { vendor_knob: 1 } }), sink);

    expect(result).toEqual({
      usage: { promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens },
      finishReason: 'stop',
    });
    expect(sink.content()).toBe(DEFAULT_PIECES.join(''));
    // role chunk, one per piece, finish chunk; no usage-only chunk, no usage fields.
    expect(sink.chunks).toHaveLength(DEFAULT_PIECES.length + 2);
    for (const chunk of sink.chunks) {
      expect(chunk.model).toBe(MODEL_ID);
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk).not.toHaveProperty('usage');
    }
    expect((sink.chunks.at(-1)!.choices as { finish_reason: string }[])[0]!.finish_reason).toBe('stop');

    const sent = fake.requests[0]!.body;
    expect(sent.model).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(sent.stream).toBe(true);
    expect(sent.stream_options).toEqual({ include_usage: true });
    expect(sent.vendor_knob).toBe(1);
  });

  it('keeps the final usage chunk when the client asked for it', async () => {
    const fake = await upstream();
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true, includeUsage: true }), sink);

    expect(result.usage).toEqual({ promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens });
    expect(sink.chunks).toHaveLength(DEFAULT_PIECES.length + 3);
    const last = sink.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(shownUsage(FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens));
    expect(last.model).toBe(MODEL_ID);
    expect(sink.chunks[0]!.usage).toBeNull();
  });

  it('counts the streamed content with the tokenizer when the upstream sends no usage', async () => {
    const fake = await upstream({ noUsage: true });
    const backend = backendFor([deployment(fake.url)]);

    const hidden = collectingSink();
    const result = await backend.stream(call({ stream: true }), hidden);
    const expected = { promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(DEFAULT_PIECES.join('')) };
    expect(result.usage).toEqual({ ...expected, basis: 'counted' });
    expect(hidden.chunks.every((chunk) => !('usage' in chunk))).toBe(true);

    // A client that asked still gets its usage chunk, with lmgate's count.
    const shown = collectingSink();
    await backend.stream(call({ stream: true, includeUsage: true }), shown);
    const last = shown.chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.model).toBe(MODEL_ID);
    expect(last.usage).toEqual(shownUsage(expected.promptTokens, expected.completionTokens));
  });

  it("replaces an upstream's own usage cost with lmgate's, streamed or whole, compact or spaced", async () => {
    for (const spacedJson of [false, true]) {
      const fake = await upstream({ usageCost: 0.25, spacedJson });
      const backend = backendFor([deployment(fake.url)]);
      const expected = shownUsage(FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens);
      const sink = collectingSink();
      await backend.stream(call({ stream: true, includeUsage: true }), sink);
      expect(sink.chunks.at(-1)!.usage).toEqual(expected);
      const whole = await backend.complete(call());
      expect((JSON.parse(whole.body) as { usage: unknown }).usage).toEqual(expected);
    }
  });

  it('shows lmgate’s model id when the upstream names a dated snapshot, and relays text that quotes JSON keys', async () => {
    const pieces = ['Say "usage":{"prompt_tokens":1}', ' or "finish_reason":"stop"', ' and "error": "none"', ' "model":"x"'];
    const fake = await upstream({ pieces, reportedModel: 'gpt-4o-mini-2024-07-18' });
    const backend = backendFor([deployment(fake.url, { model: 'gpt-4o-mini' })]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true }), sink);

    expectWholeStreamWithoutUsage(result, sink, pieces);
  });

  it('reads JSON written with spaces (Python’s json.dumps): usage hidden and billed, finish reason kept', async () => {
    const fake = await upstream({ spacedJson: true });
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true }), sink);

    expectWholeStreamWithoutUsage(result, sink, DEFAULT_PIECES);
  });

  it('with several choices, the answer’s finish reason is the first choice’s, even when another finishes last', async () => {
    const fake = await upstream({ choices: 2 });
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true }), sink);

    expect(result).toEqual({ usage: { promptTokens: FAKE_USAGE.prompt_tokens, completionTokens: FAKE_USAGE.completion_tokens }, finishReason: 'stop' });
    const finishes = sink.chunks.flatMap((chunk) => (chunk.choices as { index: number; finish_reason: string | null }[]).filter((c) => c.finish_reason !== null));
    expect(finishes.map((c) => [c.index, c.finish_reason])).toEqual([[0, 'stop'], [1, 'length']]);
    expect(sink.chunks.every((chunk) => chunk.model === MODEL_ID && !('usage' in chunk))).toBe(true);
  });

  it('without usage from the upstream, counts every token of a long stream: escapes decoded, each choice apart', async () => {
    // 1.5 MB of text in 500 chunks (kept as text, joined as it grows), with what JSON escapes.
    const pieces = Array.from({ length: 500 }, (_, i) => ` chunk ${i}: "quoted"\n\\ \t é 😀 ${'lorem ipsum dolor sit amet '.repeat(110)}`);
    for (const choices of [1, 2]) {
      const fake = await upstream({ pieces, noUsage: true, choices });
      const backend = backendFor([deployment(fake.url)]);
      const sink = collectingSink();

      const result = await backend.stream(call({ stream: true }), sink);

      if (choices === 1) expect(sink.content()).toBe(pieces.join(''));
      expect(result.usage).toEqual({ promptTokens: PROMPT_TOKENS, completionTokens: choices * countTextTokens(pieces.join('')), basis: 'counted' });
    }
  });

  it('reads events cut mid-line across reads, with CRLF line endings and multi-byte characters', async () => {
    const pieces = ['Grüße', ' 世界', ' 🎉🎉', ' done'];
    const fake = await upstream({ pieces, lineEnding: '\r\n', fragmentBytes: 7 });
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(sink.content()).toBe(pieces.join(''));
    expect(result.finishReason).toBe('stop');
    expect(sink.chunks).toHaveLength(pieces.length + 2);
  });

  it('relays huge chunks whole', async () => {
    const pieces = ['a'.repeat(1_000_000), 'b'.repeat(300_000)];
    const fake = await upstream({ pieces });
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();
    await backend.stream(call({ stream: true }), sink);
    expect(sink.content()).toBe(pieces.join(''));
  });

  it('waits for the sink to drain when it reports a full buffer', async () => {
    // The pieces a few milliseconds apart, so they arrive in several reads. Events that
    // arrive in one read go to the sink together; the next read waits for the drain.
    const fake = await upstream({ chunkDelayMs: 5 });
    const backend = backendFor([deployment(fake.url)]);
    const chunks: string[] = [];
    let drains = 0;
    let turns = 0;
    let inTurn = false;
    const sink: ChunkSink = {
      send: (json) => {
        chunks.push(json);
        if (!inTurn) {
          inTurn = true;
          turns++;
          setImmediate(() => (inTurn = false));
        }
        return false;
      },
      drained: () => {
        drains++;
        return new Promise((resolve) => setTimeout(resolve, 1));
      },
    };
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.finishReason).toBe('stop');
    expect(turns).toBeGreaterThan(1);
    expect(drains).toBe(turns);
  });

  it('a slow trickle below the idle limit streams to the end', async () => {
    const fake = await upstream({ chunkDelayMs: 60 });
    const backend = backendFor([deployment(fake.url, { timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 400, totalMs: 5000 } })]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.error).toBeUndefined();
    expect(sink.content()).toBe(DEFAULT_PIECES.join(''));
  });
});

describe('failover before the first byte', () => {
  it('moves on when the first deployment refuses connections', async () => {
    const refusing = await refusingUpstreamUrl();
    const fake = await upstream();
    const backend = backendFor([deployment(refusing), deployment(fake.url)]);
    const result = await backend.complete(call());
    expect(JSON.parse(result.body)).toMatchObject({ model: MODEL_ID });
    expect(fake.requests).toHaveLength(1);
  });

  it('moves on when the first deployment answers 500', async () => {
    const failing = await upstream({ status: 500 });
    const fake = await upstream();
    const backend = backendFor([deployment(failing.url), deployment(fake.url)]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.finishReason).toBe('stop');
    expect(sink.content()).toBe(DEFAULT_PIECES.join(''));
    expect(failing.requests).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('moves on when the first deployment answers 429 with Retry-After', async () => {
    const limited = await upstream({ status: 429, retryAfter: '30' });
    const fake = await upstream();
    const backend = backendFor([deployment(limited.url), deployment(fake.url)]);
    const result = await backend.complete(call());
    expect(result.finishReason).toBe('stop');
    expect(limited.requests).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it('moves on when the first stream breaks before its first event', async () => {
    const dropping = await upstream({ dropAfterHeaders: true });
    const fake = await upstream();
    const backend = backendFor([deployment(dropping.url), deployment(fake.url)]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.error).toBeUndefined();
    expect(sink.content()).toBe(DEFAULT_PIECES.join(''));
    expect(sink.chunks).toHaveLength(DEFAULT_PIECES.length + 2);
    expect(dropping.requests).toHaveLength(1);
  });

  it('all deployments unreachable is a 503', async () => {
    const backend = backendFor([deployment(await refusingUpstreamUrl()), deployment(await refusingUpstreamUrl())]);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(NoBackendAvailableError);
    expect(statusOf(err)).toBe(503);
    expect(err.message).not.toContain('127.0.0.1');
  });

  it('all deployments rate-limited is a 503', async () => {
    const first = await upstream({ status: 429, retryAfter: '5' });
    const second = await upstream({ status: 429 });
    const backend = backendFor([deployment(first.url), deployment(second.url)]);
    const err = await rejection(backend.stream(call({ stream: true }), collectingSink()));
    expect(err).toBeInstanceOf(NoBackendAvailableError);
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
  });

  it('all deployments answering 500 is a 502, after one attempt each', async () => {
    const first = await upstream({ status: 500 });
    const second = await upstream({ status: 503 });
    const backend = backendFor([deployment(first.url), deployment(second.url)]);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(BadUpstreamError);
    expect(statusOf(err)).toBe(502);
    expect(first.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expectNoSecrets(err, first.hostPort, second.hostPort);
  });

  it('malformed JSON from the only deployment is a 502', async () => {
    const fake = await upstream({ malformed: true });
    const backend = backendFor([deployment(fake.url)]);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(BadUpstreamError);
    expectNoSecrets(err, fake.hostPort);
  });

  it('a first byte slower than firstByteMs is a 504', async () => {
    const fake = await upstream({ firstByteDelayMs: 2000 });
    const backend = backendFor([deployment(fake.url, { timeouts: { connectMs: 1000, firstByteMs: 150, idleMs: 1000, totalMs: 10_000 } })]);
    const err = await rejection(backend.stream(call({ stream: true }), collectingSink()));
    expect(err).toBeInstanceOf(UpstreamTimeoutError);
    expect(statusOf(err)).toBe(504);
    expectNoSecrets(err, fake.hostPort);
  });

  it('a deployment at its concurrency limit is skipped; all full is a 503', async () => {
    const slow = await upstream({ firstByteDelayMs: 300 });
    const alsoSlow = await upstream({ firstByteDelayMs: 300 });
    const backend = backendFor([deployment(slow.url, { maxConcurrent: 1 }), deployment(alsoSlow.url, { maxConcurrent: 1 })]);
    const first = backend.complete(call());
    const second = backend.complete(call());
    const third = await rejection(backend.complete(call()));
    expect(third).toBeInstanceOf(NoBackendAvailableError);
    expect(statusOf(third)).toBe(503);
    await Promise.all([first, second]);
    expect(slow.requests).toHaveLength(1);
    expect(alsoSlow.requests).toHaveLength(1);
  });

  it('an upstream 400 is relayed with its message and status, not retried', async () => {
    const rejecting = await upstream({ status: 400, errorMessage: "'messages' must contain at least one user message" });
    const other = await upstream();
    const backend = backendFor([deployment(rejecting.url), deployment(other.url)]);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(UpstreamRejectedError);
    expect(statusOf(err)).toBe(400);
    expect((err as UpstreamRejectedError).upstream.message).toBe("'messages' must contain at least one user message");
    expect(other.requests).toHaveLength(0);
  });

  it("an upstream message quoting the upstream's address or key is redacted", async () => {
    const rejecting = await upstream({ status: 400 });
    rejecting.behave({ status: 400, errorMessage: `bad request to ${rejecting.url} with key ${API_KEY}` });
    const backend = backendFor([deployment(rejecting.url)]);
    const err = await rejection(backend.stream(call({ stream: true }), collectingSink()));
    expect(err).toBeInstanceOf(UpstreamRejectedError);
    expectNoSecrets(err, rejecting.hostPort);
    expect((err as UpstreamRejectedError).upstream.message).toContain('[redacted]');
  });
});

describe('after the first byte', () => {
  it('a dropped stream ends with an error and the usage of what was delivered', async () => {
    const fake = await upstream({ dropAfterChunks: 2 });
    const other = await upstream();
    const backend = backendFor([deployment(fake.url), deployment(other.url)]);
    const sink = collectingSink();

    const result = await backend.stream(call({ stream: true }), sink);

    expect(result.error).toBeInstanceOf(BadUpstreamError);
    expect(statusOf(result.error!)).toBe(502);
    expectNoSecrets(result.error!, fake.hostPort);
    expect(result.finishReason).toBeNull();
    const delivered = DEFAULT_PIECES.slice(0, 2).join('');
    expect(sink.content()).toBe(delivered);
    expect(result.usage).toEqual({ promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(delivered), basis: 'counted' });
    // Already streaming: no second deployment may add to what the client saw.
    expect(other.requests).toHaveLength(0);
  });

  it('an upstream that goes idle mid-stream ends it with a 504 error', async () => {
    const fake = await upstream({ chunkDelayMs: 1000 });
    const backend = backendFor([deployment(fake.url, { timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 200, totalMs: 10_000 } })]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.error).toBeInstanceOf(UpstreamTimeoutError);
    expect(result.usage).toEqual({ promptTokens: PROMPT_TOKENS, completionTokens: 0, basis: 'counted' });
    expect(sink.chunks).toHaveLength(1); // the role chunk
  });

  it('a malformed event mid-stream ends it with a 502 error', async () => {
    const fake = await upstream({ malformed: true });
    const backend = backendFor([deployment(fake.url)]);
    const sink = collectingSink();
    const result = await backend.stream(call({ stream: true }), sink);
    expect(result.error).toBeInstanceOf(BadUpstreamError);
    expect(sink.content()).toBe(DEFAULT_PIECES[0]);
  });

  it('a client abort closes the upstream connection and resolves with the partial usage', async () => {
    const pieces = Array.from({ length: 50 }, (_, i) => ` word${i}`);
    const fake = await upstream({ pieces, chunkDelayMs: 20 });
    const backend = backendFor([deployment(fake.url)]);
    const client = new AbortController();
    // The role chunk and two content chunks, then the client goes.
    const sink = collectingSink((count) => {
      if (count === 3) client.abort();
    });

    const result = await backend.stream(call({ stream: true, signal: client.signal }), sink);

    expect(result.error).toBeUndefined();
    expect(result.finishReason).toBeNull();
    expect(sink.chunks).toHaveLength(3);
    expect(sink.content()).toBe(pieces.slice(0, 2).join(''));
    expect(result.usage).toEqual({ promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(sink.content()), basis: 'counted' });
    expect(await fake.requests[0]!.closed).toBe(true);
  });
});

describe('client abort within one read', () => {
  it('forwards nothing after the abort, even from events that arrived together', async () => {
    const pieces = Array.from({ length: 20 }, (_, i) => ` w${i}`);
    const fake = await upstream({ pieces });
    const backend = backendFor([deployment(fake.url)]);
    const client = new AbortController();
    const sink = collectingSink((count) => {
      if (count === 3) client.abort();
    });
    const result = await backend.stream(call({ stream: true, signal: client.signal }), sink);
    expect(sink.chunks).toHaveLength(3);
    expect(result.usage).toEqual({ promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(pieces.slice(0, 2).join('')), basis: 'counted' });
  });
});

/** Polls a condition that another server's progress makes true (no fixed sleeps). */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('circuit breaker', () => {
  /** A backend whose breakers read a clock the test moves. */
  function backendWithClock(deployments: UpstreamDeployment[]): { backend: OpenAICompatibleBackend; advance(ms: number): void } {
    let now = 0;
    const backend = createOpenAICompatibleBackend({ deployments, random: () => 0, now: () => now });
    cleanups.push(() => backend.close());
    return { backend, advance: (ms) => void (now += ms) };
  }

  it('takes a failing deployment out of rotation, probes it after the cooldown, and brings it back', async () => {
    const flaky = await upstream({ status: 503 });
    const healthy = await upstream();
    const breakerOptions = { circuitBreaker: { failureThreshold: 3, cooldownMs: 5000, maxCooldownMs: 60_000 } };
    const { backend, advance } = backendWithClock([deployment(flaky.url, breakerOptions), deployment(healthy.url, breakerOptions)]);
    const [first] = backend.deployments;

    // The first deployment is always tried first (random() = 0): three failures open it.
    for (let i = 0; i < 3; i++) await backend.complete(call());
    expect(flaky.requests).toHaveLength(3);
    expect(first!.breaker.state).toBe('open');

    // Cooling down: not even tried.
    await backend.complete(call());
    expect(flaky.requests).toHaveLength(3);
    expect(healthy.requests).toHaveLength(4);

    // After the cooldown one request probes it; it has recovered, so it is back.
    flaky.behave({});
    advance(5000);
    expect(first!.breaker.state).toBe('half_open');
    await backend.complete(call());
    expect(flaky.requests).toHaveLength(4);
    expect(first!.breaker.state).toBe('closed');
    await backend.complete(call());
    expect(flaky.requests).toHaveLength(5);
    expect(healthy.requests).toHaveLength(4);
  });

  it('a 500 the request caused, sent again and again, never opens the circuit; the client reads the upstream message', async () => {
    const picky = await upstream({ status: 500, errorMessage: 'Failed to parse tool call' });
    const { backend } = backendWithClock([deployment(picky.url, { circuitBreaker: { failureThreshold: 3, cooldownMs: 5000, maxCooldownMs: 60_000 } })]);
    const [only] = backend.deployments;
    for (let i = 0; i < 10; i++) {
      const err = await rejection(backend.complete(call({ extra: { tools: [{ type: 'function', function: { name: 'f' } }] } })));
      expect(err).toBeInstanceOf(BadUpstreamError);
      expect((err as BadUpstreamError).upstream).toEqual({ status: 500, message: 'Failed to parse tool call', fields: { type: 'invalid_request_error' } });
    }
    expect(only!.breaker.state).toBe('closed');
    picky.behave({});
    await backend.complete(call());
    expect(picky.requests).toHaveLength(11);
  });

  it('500s of different requests open the circuit once they are most of what the deployment was asked', async () => {
    const broken = await upstream({ status: 500, errorMessage: 'internal' });
    const { backend } = backendWithClock([deployment(broken.url, { circuitBreaker: { failureThreshold: 3, cooldownMs: 5000, maxCooldownMs: 60_000 } })]);
    const [only] = backend.deployments;
    for (let i = 0; i < 8 && only!.breaker.state === 'closed'; i++) {
      await rejection(backend.complete(call({ extra: { seed: i } })));
    }
    expect(only!.breaker.state).toBe('open');
    // Distinct requests: the third that failed made three distinct failures; three such in a row open it.
    expect(broken.requests.length).toBeLessThanOrEqual(5);
  });

  it('every deployment cooling down is a 503 without a single upstream request', async () => {
    const down = await upstream({ status: 502 });
    const { backend } = backendWithClock([deployment(down.url, { circuitBreaker: { failureThreshold: 2, cooldownMs: 5000, maxCooldownMs: 60_000 } })]);
    for (let i = 0; i < 2; i++) expect(await rejection(backend.complete(call()))).toBeInstanceOf(BadUpstreamError);
    const err = await rejection(backend.complete(call()));
    expect(err).toBeInstanceOf(NoBackendAvailableError);
    expect(statusOf(err)).toBe(503);
    expect(down.requests).toHaveLength(2);
  });

  it("a 429's Retry-After keeps the deployment out for that long", async () => {
    const limited = await upstream({ status: 429, retryAfter: '30' });
    const other = await upstream();
    const { backend, advance } = backendWithClock([deployment(limited.url), deployment(other.url)]);
    await backend.complete(call());
    expect(limited.requests).toHaveLength(1);
    limited.behave({});
    advance(29_000);
    await backend.complete(call());
    expect(limited.requests).toHaveLength(1);
    advance(1000);
    await backend.complete(call());
    expect(limited.requests).toHaveLength(2);
  });

  it('an upstream 400 says nothing against the deployment', async () => {
    const picky = await upstream({ status: 400, errorMessage: 'bad request' });
    const { backend } = backendWithClock([deployment(picky.url)]);
    for (let i = 0; i < 5; i++) expect(await rejection(backend.complete(call()))).toBeInstanceOf(UpstreamRejectedError);
    expect(backend.deployments[0]!.breaker.state).toBe('closed');
    expect(picky.requests).toHaveLength(5);
  });
});
