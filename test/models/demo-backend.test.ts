import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Usage } from '../../src/billing/usage.js';
import type { ChatRequest } from '../../src/chat/chat-request.js';
import { ClientGoneError } from '../../src/errors.js';
import type { BackendCall, ChunkSink } from '../../src/models/backend.js';
import { createDemoBackend } from '../../src/models/demo-backend.js';
import { countTextTokens, splitIntoTokens } from '../../src/models/tokens.js';
import { clientLinkOf } from '../helpers/client-link.js';

// ---- wire shapes, as a client reads them ------------------------------------------------

interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

interface CompletionBody {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: string; content: string; refusal: null; annotations: unknown[] };
    logprobs: null;
    finish_reason: string;
  }[];
  usage: UsageBody;
  service_tier: string;
  system_fingerprint: string;
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  service_tier: string;
  system_fingerprint: string;
  choices: {
    index: number;
    delta: { role?: string; content?: string; refusal?: null };
    logprobs: null;
    finish_reason: string | null;
  }[];
  usage?: UsageBody | null;
}

/** The charge the test calls report: 3 micro-credits per prompt token, 7 per completion token. */
function testCharge({ promptTokens, completionTokens }: Usage): number {
  return promptTokens * 3 + completionTokens * 7;
}

function usageBody(promptTokens: number, completionTokens: number): UsageBody {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    cost: testCharge({ promptTokens, completionTokens }) / 1_000_000,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

// ---- a real in-memory sink ---------------------------------------------------------------

class CollectingSink implements ChunkSink {
  readonly sent: string[] = [];
  sentAfterAbort = 0;
  drainWaits = 0;
  private releaseDrain: (() => void) | undefined;

  constructor(
    private readonly options: {
      signal?: AbortSignal;
      /** Report a full socket buffer on every send; drained() waits for release(). */
      isAlwaysFull?: boolean;
      onSend?: (chunk: Chunk, sink: CollectingSink) => void;
    } = {},
  ) {}

  send(json: string): boolean {
    if (this.options.signal?.aborted) this.sentAfterAbort++;
    this.sent.push(json);
    this.options.onSend?.(JSON.parse(json) as Chunk, this);
    return !this.options.isAlwaysFull;
  }

  drained(): Promise<void> {
    this.drainWaits++;
    return new Promise((resolve) => {
      this.releaseDrain = resolve;
    });
  }

  release(): void {
    const release = this.releaseDrain;
    this.releaseDrain = undefined;
    release?.();
  }

  get chunks(): Chunk[] {
    return this.sent.map((json) => JSON.parse(json) as Chunk);
  }

  /** Content deltas of one choice, in order. */
  deltas(index = 0): string[] {
    const deltas: string[] = [];
    for (const chunk of this.chunks) {
      for (const choice of chunk.choices) {
        if (choice.index === index && typeof choice.delta.content === 'string' && choice.delta.role === undefined) {
          deltas.push(choice.delta.content);
        }
      }
    }
    return deltas;
  }

  content(index = 0): string {
    return this.deltas(index).join('');
  }
}

/** An immediately draining sink for the simple cases. */
class EagerSink extends CollectingSink {
  override drained(): Promise<void> {
    this.drainWaits++;
    return Promise.resolve();
  }
}

function callFor(request: Partial<ChatRequest>, overrides: Partial<BackendCall> = {}): BackendCall {
  return {
    request: { model: 'demo-echo', messages: [{ role: 'user', content: 'Hello there' }], ...request },
    modelId: 'demo-echo',
    promptTokens: 11,
    maxOutputTokens: 4096,
    includeUsage: false,
    chargeMicros: testCharge,
    client: clientLinkOf(),
    ...overrides,
  };
}

function userSays(content: string): Partial<ChatRequest> {
  return { messages: [{ role: 'user', content }] };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const echo = createDemoBackend({ kind: 'echo' });
const FOX = 'The quick brown fox jumps over the lazy dog.';
const UNICODE = 'Grüße aus Köln 👋🏽 — 日本語のテキスト 🧑‍🚀! ñ ✓';

afterEach(() => {
  vi.useRealTimers();
});

// ---- echo, whole answers --------------------------------------------------------------

describe('echo model, complete', () => {
  it('answers with an OpenAI chat.completion echoing the last user message', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { body, usage } = await echo.complete(callFor(userSays(FOX)));
    const completion = JSON.parse(body) as CompletionBody;
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-[A-Za-z0-9]{29}$/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'demo-echo',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: FOX, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: usageBody(11, countTextTokens(FOX)),
      service_tier: 'default',
      system_fingerprint: expect.stringMatching(/^fp_/),
    });
    expect(Object.keys(completion)).toEqual([
      'id', 'object', 'created', 'model', 'choices', 'usage', 'service_tier', 'system_fingerprint',
    ]);
    expect(completion.created).toBeGreaterThanOrEqual(before);
    expect(completion.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(usage).toEqual({ promptTokens: 11, completionTokens: 10 });
  });

  it('echoes the last user message even when other roles follow it, joining text parts', async () => {
    const { body } = await echo.complete(
      callFor({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: [{ type: 'text', text: 'second ' }, { type: 'image_url', image_url: { url: 'https://example.test/cat.png' } }, { type: 'text', text: 'question' }] },
          { role: 'assistant', content: 'prefill' },
        ],
      }),
    );
    expect((JSON.parse(body) as CompletionBody).choices[0]?.message.content).toBe('second question');
  });

  it('answers with empty content and no tokens when there is no user message', async () => {
    const { body, usage } = await echo.complete(callFor({ messages: [{ role: 'system', content: 'hi' }] }));
    expect((JSON.parse(body) as CompletionBody).choices[0]).toMatchObject({ message: { content: '' }, finish_reason: 'stop' });
    expect(usage.completionTokens).toBe(0);
  });

  it('gives n choices indexed 0..n-1, billing the tokens of all of them', async () => {
    const { body, usage } = await echo.complete(callFor({ ...userSays(FOX), n: 3 }));
    const choices = (JSON.parse(body) as CompletionBody).choices;
    expect(choices.map((choice) => choice.index)).toEqual([0, 1, 2]);
    for (const choice of choices) expect(choice.message.content).toBe(FOX);
    expect(usage.completionTokens).toBe(3 * countTextTokens(FOX));
    expect((JSON.parse(body) as CompletionBody).usage.completion_tokens).toBe(3 * countTextTokens(FOX));
  });

  it('cuts before the earliest stop sequence with finish_reason stop', async () => {
    const { body, usage } = await echo.complete(callFor({ ...userSays(FOX), stop: ['lazy', 'fox'] }));
    const choice = (JSON.parse(body) as CompletionBody).choices[0];
    expect(choice?.message.content).toBe('The quick brown ');
    expect(choice?.finish_reason).toBe('stop');
    // Generated up to and including the token that completed "fox".
    expect(usage.completionTokens).toBe(4);
  });

  it('stops after exactly max output tokens with finish_reason length', async () => {
    const { body, usage } = await echo.complete(callFor(userSays(FOX), { maxOutputTokens: 4 }));
    const choice = (JSON.parse(body) as CompletionBody).choices[0];
    expect(choice?.message.content).toBe('The quick brown fox');
    expect(choice?.finish_reason).toBe('length');
    expect(usage.completionTokens).toBe(4);
    expect((JSON.parse(body) as CompletionBody).usage).toEqual(usageBody(11, 4));
  });

  it('finishes with stop when the answer ends exactly at the ceiling', async () => {
    const { body, usage } = await echo.complete(callFor(userSays(FOX), { maxOutputTokens: 10 }));
    expect((JSON.parse(body) as CompletionBody).choices[0]?.finish_reason).toBe('stop');
    expect(usage.completionTokens).toBe(10);
  });

  it('answers at once, without a promise, and never asks about the client', () => {
    const call = callFor({});
    Object.defineProperty(call, 'client', { get: () => { throw new Error('client read'); } });
    const answer = echo.complete(call);
    expect(answer).not.toBeInstanceOf(Promise);
    expect((JSON.parse((answer as { body: string }).body) as CompletionBody).object).toBe('chat.completion');
  });
});

// ---- echo, streamed ---------------------------------------------------------------------

describe('echo model, stream', () => {
  it('writes a role chunk, one chunk per token, then a finish chunk, all OpenAI-exact', async () => {
    const sink = new EagerSink();
    const result = await echo.stream(callFor(userSays(FOX)), sink);
    const chunks = sink.chunks;
    const first = chunks[0];
    if (!first) throw new Error('nothing was streamed');
    const envelope = {
      id: first.id,
      object: 'chat.completion.chunk',
      created: first.created,
      model: 'demo-echo',
      service_tier: 'default',
      system_fingerprint: first.system_fingerprint,
    };
    expect(first.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(first.system_fingerprint).toMatch(/^fp_/);
    const expected: Chunk[] = [
      {
        ...envelope,
        choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }],
      },
      ...splitIntoTokens(FOX).map((piece) => ({
        ...envelope,
        choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }],
      })),
      { ...envelope, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
    ];
    expect(chunks).toEqual(expected);
    for (const chunk of chunks) {
      expect(Object.keys(chunk)).toEqual([
        'id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint', 'choices',
      ]);
    }
    expect(result).toEqual({ usage: { promptTokens: 11, completionTokens: 10 }, finishReason: 'stop' });
  });

  it('with include_usage puts usage: null on every chunk and ends with the usage chunk', async () => {
    const sink = new EagerSink();
    const result = await echo.stream(callFor({ ...userSays(FOX), n: 2 }, { includeUsage: true }), sink);
    const chunks = sink.chunks;
    const last = chunks.at(-1);
    for (const chunk of chunks.slice(0, -1)) {
      expect(chunk.usage).toBeNull();
      expect(chunk.choices).toHaveLength(1);
    }
    const streamedTokens = countTextTokens(sink.content(0)) + countTextTokens(sink.content(1));
    expect(last).toEqual({
      id: chunks[0]?.id,
      object: 'chat.completion.chunk',
      created: chunks[0]?.created,
      model: 'demo-echo',
      service_tier: 'default',
      system_fingerprint: chunks[0]?.system_fingerprint,
      choices: [],
      usage: usageBody(11, streamedTokens),
    });
    expect(Object.keys(last ?? {})).toEqual([
      'id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint', 'choices', 'usage',
    ]);
    expect(streamedTokens).toBe(2 * countTextTokens(FOX));
    expect(result.usage).toEqual({ promptTokens: 11, completionTokens: streamedTokens });
  });

  it('streams n choices, each opened by its role chunk and closed by its finish chunk', async () => {
    const sink = new EagerSink();
    await echo.stream(callFor({ ...userSays(FOX), n: 3 }), sink);
    for (const index of [0, 1, 2]) {
      const own = sink.chunks.flatMap((chunk) => chunk.choices).filter((choice) => choice.index === index);
      expect(own[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
      expect(own.at(-1)).toEqual({ index, delta: {}, logprobs: null, finish_reason: 'stop' });
      expect(sink.content(index)).toBe(FOX);
    }
    expect(new Set(sink.chunks.map((chunk) => chunk.id)).size).toBe(1);
  });

  it('reassembles unicode and emoji exactly, never sending half a character', async () => {
    const sink = new EagerSink();
    const result = await echo.stream(callFor(userSays(UNICODE), { includeUsage: true }), sink);
    expect(sink.content()).toBe(UNICODE);
    for (const delta of sink.deltas()) {
      expect(delta).not.toBe('');
      expect(delta).not.toContain('\uFFFD');
    }
    expect(result.usage.completionTokens).toBe(countTextTokens(UNICODE));
    expect(sink.chunks.at(-1)?.usage?.completion_tokens).toBe(countTextTokens(UNICODE));
  });

  it('agrees with complete on content and tokens when a stop sequence cuts the answer', async () => {
    const request = { ...userSays(FOX), stop: 'jumps' };
    const sink = new EagerSink();
    const streamed = await echo.stream(callFor(request), sink);
    const whole = await echo.complete(callFor(request));
    expect(sink.content()).toBe((JSON.parse(whole.body) as CompletionBody).choices[0]?.message.content);
    expect(streamed.usage).toEqual(whole.usage);
  });

  it('stops at a stop sequence split across tokens without ever sending text past it', async () => {
    const stop = 'own f';
    // The stop spans " brown" and " fox": no single token contains it.
    expect(splitIntoTokens(FOX).some((piece) => piece.includes(stop))).toBe(false);
    const expected = 'The quick br';
    let shown = '';
    const sink = new EagerSink({
      onSend: (chunk) => {
        const delta = chunk.choices[0]?.delta;
        if (delta?.content !== undefined && delta.role === undefined) shown += delta.content;
        // At every moment, what the client has seen is a prefix of the cut answer.
        expect(expected.startsWith(shown)).toBe(true);
      },
    });
    const result = await echo.stream(callFor({ ...userSays(FOX), stop: [stop] }, { includeUsage: true }), sink);
    expect(sink.content()).toBe(expected);
    expect(sink.chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    // "The", " quick", " brown", " fox": the token completing the stop was generated.
    expect(result.usage.completionTokens).toBe(4);
    expect(sink.chunks.at(-1)?.usage?.completion_tokens).toBe(4);
  });

  it('releases held-back text that turned out not to be a stop sequence', async () => {
    const text = 'a brown bear, not a brown fox at all';
    const sink = new EagerSink();
    const result = await echo.stream(callFor({ ...userSays(text), stop: ['brown fox'] }), sink);
    expect(sink.content()).toBe('a brown bear, not a ');
    expect(sink.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(result.usage.completionTokens).toBe(splitIntoTokens('a brown bear, not a brown fox').length);
  });

  it('releases a held partial stop sequence when the answer ends', async () => {
    const sink = new EagerSink();
    await echo.stream(callFor({ ...userSays('the end is a bro'), stop: ['brown'] }), sink);
    expect(sink.content()).toBe('the end is a bro');
  });

  it('stops after exactly max output tokens with finish_reason length', async () => {
    const sink = new EagerSink();
    const result = await echo.stream(callFor(userSays(FOX), { maxOutputTokens: 3, includeUsage: true }), sink);
    expect(sink.deltas()).toEqual(['The', ' quick', ' brown']);
    expect(sink.chunks.at(-2)?.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'length' });
    expect(result.usage.completionTokens).toBe(3);
    expect(sink.chunks.at(-1)?.usage?.completion_tokens).toBe(3);
  });

  it('streams an empty answer as a role chunk and a finish chunk', async () => {
    const sink = new EagerSink();
    const result = await echo.stream(callFor(userSays('')), sink);
    expect(sink.chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      {},
    ]);
    expect(result.usage.completionTokens).toBe(0);
  });

  it('waits for the sink to drain whenever it reports a full buffer', async () => {
    const sink = new CollectingSink({ isAlwaysFull: true });
    const streaming = echo.stream(callFor(userSays('one two three')), sink);
    // role + 3 tokens + finish, each followed by a wait: one chunk per release, no more.
    for (let expectedSent = 1; expectedSent <= 5; expectedSent++) {
      await nextTurn();
      expect(sink.sent).toHaveLength(expectedSent);
      expect(sink.drainWaits).toBe(expectedSent);
      sink.release();
    }
    const result = await streaming;
    expect(sink.content()).toBe('one two three');
    expect(result.usage.completionTokens).toBe(3);
  });

  it('stops when the client leaves while it waits for the sink to drain', async () => {
    const controller = new AbortController();
    const sink = new CollectingSink({ isAlwaysFull: true, signal: controller.signal });
    const streaming = echo.stream(callFor(userSays(FOX), { client: clientLinkOf(controller.signal), includeUsage: true }), sink);
    await nextTurn();
    sink.release(); // role chunk drained
    await nextTurn();
    sink.release(); // "The" drained
    await nextTurn();
    expect(sink.sent).toHaveLength(3);
    controller.abort();
    sink.release(); // the route resolves drained() when the client goes
    const result = await streaming;
    expect(sink.sent).toHaveLength(3);
    expect(sink.sentAfterAbort).toBe(0);
    expect(result).toEqual({ usage: { promptTokens: 11, completionTokens: 2 }, finishReason: null });
  });
});

// ---- lorem ----------------------------------------------------------------------------------

describe('lorem model', () => {
  const fastLorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 0 });

  async function loremContents(seed: number | undefined, n = 1): Promise<string[]> {
    const { body } = await fastLorem.complete(callFor({ seed, n }, { modelId: 'demo-lorem' }));
    return (JSON.parse(body) as CompletionBody).choices.map((choice) => choice.message.content);
  }

  it('writes defaultTokens tokens of English-looking paragraphs, finishing with stop', async () => {
    const { body, usage } = await fastLorem.complete(callFor({ seed: 7 }, { modelId: 'demo-lorem' }));
    const choice = (JSON.parse(body) as CompletionBody).choices[0];
    const content = choice?.message.content ?? '';
    expect(choice?.finish_reason).toBe('stop');
    expect(usage.completionTokens).toBe(200);
    expect(countTextTokens(content)).toBe(200);
    expect(content).toMatch(/^[A-Z][a-z]/);
    expect(content).toContain('\n\n');
    const sentences = content.split(/(?<=[.?])\s+/).filter((sentence) => /[.?]$/.test(sentence));
    expect(sentences.length).toBeGreaterThan(5);
    expect(new Set(sentences).size).toBe(sentences.length);
  });

  it('is deterministic for a seed, differs between seeds, and differs between choices', async () => {
    const [a0, a1] = await loremContents(42, 2);
    const [b0, b1] = await loremContents(42, 2);
    const [c0] = await loremContents(43, 1);
    expect(a0).toBe(b0);
    expect(a1).toBe(b1);
    expect(a0).not.toBe(a1);
    expect(a0).not.toBe(c0);
    const [unseeded1] = await loremContents(undefined);
    const [unseeded2] = await loremContents(undefined);
    expect(unseeded1).not.toBe(unseeded2);
  });

  it('handles seeds beyond 32 bits and negative seeds deterministically', async () => {
    const big = 2 ** 40 + 5;
    expect(await loremContents(big)).toEqual(await loremContents(big));
    expect(await loremContents(big)).not.toEqual(await loremContents(5));
    expect(await loremContents(-3)).toEqual(await loremContents(-3));
  });

  it('streams the same text as complete for the same seed, with usage equal to a re-count', async () => {
    const sink = new EagerSink();
    const result = await fastLorem.stream(
      callFor({ seed: 9, n: 2 }, { modelId: 'demo-lorem', includeUsage: true }),
      sink,
    );
    const whole = await loremContents(9, 2);
    expect([sink.content(0), sink.content(1)]).toEqual(whole);
    const recounted = countTextTokens(sink.content(0)) + countTextTokens(sink.content(1));
    expect(recounted).toBe(400);
    expect(result.usage.completionTokens).toBe(recounted);
    expect(sink.chunks.at(-1)?.usage).toEqual(usageBody(11, recounted));
  });

  it("runs into the client's max tokens with finish_reason length", async () => {
    const sink = new EagerSink();
    const result = await fastLorem.stream(
      callFor({ seed: 1, max_tokens: 50 }, { modelId: 'demo-lorem', maxOutputTokens: 50 }),
      sink,
    );
    expect(sink.chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
    expect(result.usage.completionTokens).toBe(50);
    expect(sink.deltas()).toHaveLength(50);
  });

  it('cuts at a stop sequence in its own text', async () => {
    const [full] = await loremContents(3);
    const stop = (full ?? '').split(' ')[5] ?? 'missing';
    const expected = (full ?? '').slice(0, (full ?? '').indexOf(stop));
    const sink = new EagerSink();
    await fastLorem.stream(callFor({ seed: 3, stop }, { modelId: 'demo-lorem' }), sink);
    expect(sink.content()).toBe(expected);
    expect(sink.chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('emits tokens at tokensPerSec on timers', async () => {
    vi.useFakeTimers();
    const lorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 100, defaultTokens: 20 });
    const sink = new EagerSink();
    let isDone = false;
    const streaming = lorem.stream(callFor({ seed: 1 }, { modelId: 'demo-lorem' }), sink).then((result) => {
      isDone = true;
      return result;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(sink.deltas()).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100); // 10 ms per token
    expect(sink.deltas()).toHaveLength(10);
    expect(isDone).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(isDone).toBe(true);
    expect(sink.deltas()).toHaveLength(20);
    expect((await streaming).usage.completionTokens).toBe(20);
  });

  it('takes at least tokens / tokensPerSec of real time, streamed or whole', async () => {
    const lorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 200, defaultTokens: 30 });
    let startedMs = performance.now();
    await lorem.stream(callFor({}, { modelId: 'demo-lorem' }), new EagerSink());
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(120); // 30 / 200 s = 150 ms
    startedMs = performance.now();
    await lorem.complete(callFor({}, { modelId: 'demo-lorem' }));
    expect(performance.now() - startedMs).toBeGreaterThanOrEqual(120);
  });

  it('stops at once when the client disconnects, clears its timer and reports partial usage', async () => {
    vi.useFakeTimers();
    const lorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 100, defaultTokens: 1000 });
    const controller = new AbortController();
    const sink = new EagerSink({ signal: controller.signal });
    const streaming = lorem.stream(
      callFor({ seed: 5 }, { modelId: 'demo-lorem', client: clientLinkOf(controller.signal), includeUsage: true }),
      sink,
    );
    await vi.advanceTimersByTimeAsync(75);
    expect(sink.deltas()).toHaveLength(7);
    controller.abort();
    const result = await streaming;
    expect(vi.getTimerCount()).toBe(0);
    expect(result).toEqual({ usage: { promptTokens: 11, completionTokens: 7 }, finishReason: null });
    const sentAtAbort = sink.sent.length;
    await vi.advanceTimersByTimeAsync(1000);
    expect(sink.sent).toHaveLength(sentAtAbort);
    expect(sink.sentAfterAbort).toBe(0);
    // No finish chunk and no usage chunk: the client is gone.
    expect(sink.chunks.every((chunk) => chunk.choices[0]?.finish_reason === null)).toBe(true);
  });

  it('stops mid-stream when the client disconnects between two tokens', async () => {
    const controller = new AbortController();
    const lorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 0, defaultTokens: 100_000 });
    const sink = new EagerSink({
      signal: controller.signal,
      onSend: (_chunk, self) => {
        if (self.deltas().length === 5) controller.abort();
      },
    });
    const result = await lorem.stream(callFor({}, { modelId: 'demo-lorem', client: clientLinkOf(controller.signal) }), sink);
    expect(sink.deltas()).toHaveLength(5);
    expect(sink.sentAfterAbort).toBe(0);
    expect(result.usage.completionTokens).toBe(5);
  });

  it('rejects a whole answer when the client leaves while it is being written', async () => {
    vi.useFakeTimers();
    const lorem = createDemoBackend({ kind: 'lorem', tokensPerSec: 10 });
    const controller = new AbortController();
    const completing = lorem.complete(callFor({}, { modelId: 'demo-lorem', client: clientLinkOf(controller.signal) }));
    const outcome = expect(completing).rejects.toBeInstanceOf(ClientGoneError);
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort();
    await outcome;
    expect(vi.getTimerCount()).toBe(0);
  });
});
