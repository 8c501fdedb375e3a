// lmgate in front of a real llama.cpp llama-server: every answered request is charged price ×
// what the server itself reported, kind by kind, to the micro-credit, and the hold covered
// that cost once the model's prompt correction had warmed up. A recording proxy between
// lmgate and the server keeps each of the server's answers, so the expected charge comes
// from the server's own words, not from lmgate's.
//
// The model (test/llama/write-model.py) has a ChatML template with a default system prompt
// and renders tools into the prompt: lmgate's own count of a prompt is far below the
// server's, which is what the holds must learn. It never ends an answer on its own, so each
// choice runs to its max_tokens.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros, type Prices } from '../../src/billing/pricing.js';
import type { Usage } from '../../src/billing/usage.js';
import { usageOfChat as usageOf } from '../../src/models/upstream/usage-readers.js';
import type { UsageRecord } from '../../src/store/store.js';
import { startLlamaServer, type LlamaServer } from '../helpers/llama-server.js';
import { startRecordingProxy, type RecordedExchange, type RecordingProxy } from '../helpers/recording-proxy.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

// Credits per million tokens: 1,000 / 3,000 micro-credits a token, the figures the report used;
// a cached prompt token (llama.cpp reports its prompt-cache hits) at a tenth of an input one.
const PRICE = { input: 1_000, cached_input: 100, output: 3_000 };
const PRICES: Prices = {
  inputPerMTokMicros: 1_000_000_000,
  cachedInputPerMTokMicros: 100_000_000,
  cacheWritePerMTokMicros: 1_000_000_000,
  cacheWrite1hPerMTokMicros: 1_000_000_000,
  outputPerMTokMicros: 3_000_000_000,
  reasoningPerMTokMicros: 3_000_000_000,
};
/** Requests the holds may learn from before they must cover the cost. */
const WARM_UP = 20;
const REQUESTS = 240;

const WORDS = 'the a model server counts every token of its template and tools while lmgate estimates prompts from text alone and learns what each reply reports'.split(' ');
const TOOLS: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Get the weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
  { type: 'function', function: { name: 'get_time', description: 'The time in a time zone', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } },
];

let chatServer: LlamaServer;
let embedServer: LlamaServer;
let chatProxy: RecordingProxy;
let embedProxy: RecordingProxy;
let t: TestApp;

beforeAll(async () => {
  // Four slots of 2,048 tokens: every prompt here and its answer fit, so each choice ends at max_tokens.
  [chatServer, embedServer] = await Promise.all([startLlamaServer({ ctx: 8192, parallel: 4 }), startLlamaServer({ embeddings: true })]);
  [chatProxy, embedProxy] = await Promise.all([startRecordingProxy(chatServer.origin), startRecordingProxy(embedServer.origin)]);
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 100_000, tpm: 100_000_000, concurrency: 8, models: ['*'] } },
      models: {
        tiny: { context: 2048, max_output: 64, price: PRICE, deployments: [{ url: chatProxy.url, model: chatServer.model, count_tokens: 'native' }] },
        // The same server's own /completions: the prompt as it is, without the chat template.
        'tiny-text': { context: 2048, max_output: 64, endpoints: ['completions'], price: PRICE, deployments: [{ url: chatProxy.url, model: chatServer.model, completions: 'native' }] },
        'tiny-embed': { context: 2048, endpoints: ['embeddings'], price: PRICE, deployments: [{ url: embedProxy.url, model: embedServer.model }] },
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([chatProxy?.close(), embedProxy?.close()]);
  await Promise.all([chatServer?.close(), embedServer?.close()]);
});

/** A deterministic stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * What the server reported for one exchange, read from its own answer: a whole answer's
 * usage, or a stream's usage (a chunk of its own for chat, on the finishing chunk for a
 * legacy completion). llama.cpp reports one choice's output for several choices (a whole
 * answer) or one usage per choice (a stream): each choice's output is added, the prompt
 * counted once. A whole answer's choices each ran to max_tokens
 * (finish_reason length), which is what each wrote.
 */
function reportedUsage(exchange: RecordedExchange): Usage {
  const request = JSON.parse(exchange.requestBody) as { stream?: boolean; n?: number; max_tokens?: number };
  if (exchange.path.endsWith('/embeddings')) {
    const { usage } = JSON.parse(exchange.responseText) as { usage: { prompt_tokens: number } };
    return { promptTokens: usage.prompt_tokens, completionTokens: 0 };
  }
  if (!request.stream) {
    const answer = JSON.parse(exchange.responseText) as { usage: unknown; choices?: { finish_reason: string }[] };
    const usage = usageOf(answer.usage)!;
    const choices = answer.choices ?? [];
    if (choices.length <= 1) return usage;
    expect(choices.every((choice) => choice.finish_reason === 'length')).toBe(true);
    return { ...usage, completionTokens: choices.length * request.max_tokens! };
  }
  const usages = exchange.responseText
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as { usage?: unknown; choices?: unknown[] })
    .filter((chunk) => chunk.usage != null)
    .map((chunk) => usageOf(chunk.usage)!);
  expect(usages.length).toBe(request.n ?? 1);
  return { ...usages[0]!, completionTokens: usages.reduce((sum, usage) => sum + usage.completionTokens, 0) };
}

interface Outcome {
  shape: string;
  /** The cost the client was told in-band, where it was. */
  toldCost: number | undefined;
}

describe('in front of llama-server', () => {
  it(`charges price × the server’s reported usage for ${REQUESTS} requests of every shape, and the holds cover it once warmed up`, async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1_000_000 });
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey, maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: t.origin, apiKey, maxRetries: 0 });
    const next = random(2026);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const text = (): string => Array.from({ length: 1 + Math.floor(next() * 40) }, () => pick(WORDS)).join(' ');
    const maxTokens = (): number => 1 + Math.floor(next() * 12);

    const shapes: Record<string, () => Promise<Outcome>> = {
      chat: async () => {
        const completion = await openai.chat.completions.create({
          model: 'tiny',
          messages: next() < 0.5 ? [{ role: 'user', content: text() }] : [{ role: 'system', content: text() }, { role: 'user', content: text() }],
          max_tokens: maxTokens(),
        });
        return { shape: 'chat', toldCost: (completion.usage as unknown as { cost: number }).cost };
      },
      tools: async () => {
        const completion = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: text() }], tools: TOOLS.slice(0, 1 + Math.floor(next() * 2)), max_tokens: maxTokens() });
        return { shape: 'tools', toldCost: (completion.usage as unknown as { cost: number }).cost };
      },
      choices: async () => {
        const n = 2 + Math.floor(next() * 2);
        const completion = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: text() }], n, max_tokens: maxTokens() });
        expect(completion.choices).toHaveLength(n);
        return { shape: 'choices', toldCost: (completion.usage as unknown as { cost: number }).cost };
      },
      stream: async () => {
        const n = next() < 0.5 ? 1 : 2;
        const stream = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: text() }], n, max_tokens: maxTokens(), stream: true, stream_options: { include_usage: true } });
        const costs: number[] = [];
        for await (const chunk of stream) if (chunk.usage) costs.push((chunk.usage as unknown as { cost: number }).cost);
        // One usage chunk, one cost, whatever the number of choices.
        expect(costs).toHaveLength(1);
        return { shape: `stream n=${n}`, toldCost: costs[0] };
      },
      messages: async () => {
        const message = await anthropic.messages.create({ model: 'tiny', max_tokens: maxTokens(), system: text(), messages: [{ role: 'user', content: text() }] });
        expect(message.usage.input_tokens).toBeGreaterThan(0);
        return { shape: 'messages', toldCost: undefined };
      },
      'messages stream': async () => {
        const stream = anthropic.messages.stream({ model: 'tiny', max_tokens: maxTokens(), messages: [{ role: 'user', content: text() }] });
        await stream.finalMessage();
        return { shape: 'messages stream', toldCost: undefined };
      },
      completions: async () => {
        const completion = await openai.completions.create({ model: 'tiny', prompt: text(), max_tokens: maxTokens() });
        return { shape: 'completions', toldCost: (completion.usage as unknown as { cost: number }).cost };
      },
      'native completions': async () => {
        if (next() < 0.5) {
          const completion = await openai.completions.create({ model: 'tiny-text', prompt: text(), max_tokens: maxTokens() });
          expect(completion.model).toBe('tiny-text');
          return { shape: 'native completions', toldCost: (completion.usage as unknown as { cost: number }).cost };
        }
        const stream = await openai.completions.create({ model: 'tiny-text', prompt: text(), max_tokens: maxTokens(), stream: true, stream_options: { include_usage: true } });
        const costs: number[] = [];
        for await (const chunk of stream) if (chunk.usage) costs.push((chunk.usage as unknown as { cost: number }).cost);
        expect(costs).toHaveLength(1);
        return { shape: 'native completions stream', toldCost: costs[0] };
      },
      embeddings: async () => {
        await openai.embeddings.create({ model: 'tiny-embed', input: [text(), text()] });
        return { shape: 'embeddings', toldCost: undefined };
      },
    };

    const outcomes: Outcome[] = [];
    const names = Object.keys(shapes);
    for (let i = 0; i < REQUESTS; i++) outcomes.push(await shapes[names[i % names.length]!]!());
    await t.flushUsage();

    // One upstream exchange per request, in order (one request at a time, one deployment each).
    const exchanges = [...chatProxy.exchanges, ...embedProxy.exchanges];
    expect(exchanges).toHaveLength(REQUESTS);
    const records = (await t.store.listUsage(account.id)).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(records).toHaveLength(REQUESTS);
    const chatExchanges = [...chatProxy.exchanges];
    const embedExchanges = [...embedProxy.exchanges];
    let covered = 0;
    let warmCovered = 0;
    const misses: string[] = [];
    records.forEach((record: UsageRecord, i) => {
      const outcome = outcomes[i]!;
      const exchange = outcome.shape === 'embeddings' ? embedExchanges.shift()! : chatExchanges.shift()!;
      const reported = reportedUsage(exchange);
      const expected = costMicros(PRICES, reported);
      expect({ shape: outcome.shape, prompt: record.promptTokens, completion: record.completionTokens, cached: record.cachedTokens, cost: record.costMicros }).toEqual({
        shape: outcome.shape,
        prompt: reported.promptTokens,
        completion: reported.completionTokens,
        cached: reported.cachedTokens ?? 0,
        cost: expected,
      });
      expect(record.shortfallMicros).toBe(0);
      expect(record.outcome).toBe('completed');
      if (outcome.toldCost !== undefined) expect(Math.round(outcome.toldCost * 1_000_000)).toBe(expected);
      const isCovered = record.heldMicros >= record.costMicros;
      if (isCovered) covered++;
      if (i >= WARM_UP && isCovered) warmCovered++;
      if (!isCovered) misses.push(`#${i} ${outcome.shape}: held ${record.heldMicros}, cost ${record.costMicros}`);
    });
    const warmRate = warmCovered / (REQUESTS - WARM_UP);
    console.log(`llama-server billing: ${REQUESTS} requests, every charge = price × reported usage; holds covered ${covered}/${REQUESTS} (${((100 * covered) / REQUESTS).toFixed(1)} %), ${warmCovered}/${REQUESTS - WARM_UP} after the first ${WARM_UP} (${(100 * warmRate).toFixed(1)} %)`);
    if (misses.length > 0) console.log(`holds short of the cost: ${misses.join('; ')}`);
    expect(warmRate).toBeGreaterThanOrEqual(0.99);

    // The ledger holds exactly the charges.
    const charged = records.reduce((sum, record) => sum + record.costMicros, 0);
    expect(await t.store.balanceOf(account.id)).toBe(1_000_000_000_000 - charged);
  }, 300_000);

  it('count_tokens answers within 2 % of the input the same request is billed, once the model is learned', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1_000 });
    const anthropic = new Anthropic({ baseURL: t.origin, apiKey, maxRetries: 0 });
    const request = { model: 'tiny', system: 'Answer briefly, in plain words.', messages: [{ role: 'user' as const, content: 'What does a model server count in a prompt, and why does it differ from a plain text count?' }] };
    const counted = await anthropic.messages.countTokens(request);
    await anthropic.messages.create({ ...request, max_tokens: 4 });
    await t.flushUsage();
    const [record] = await t.store.listUsage(account.id);
    console.log(`count_tokens: ${counted.input_tokens}, billed input: ${record!.promptTokens}`);
    expect(Math.abs(counted.input_tokens - record!.promptTokens) / record!.promptTokens).toBeLessThanOrEqual(0.02);
  });

  it('a prompt longer than the server’s context comes back as its 400, with its type and figures, and nothing charged', async () => {
    const { account, apiKey } = await t.createAccount({ credits: 1_000 });
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey, maxRetries: 0 });
    // About 700 of lmgate's tokens: within the model's 2,048 as lmgate counts, far beyond the slot as the server does.
    const err = await openai.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'counting every token '.repeat(230) }], max_tokens: 4 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const { status, error } = err as InstanceType<typeof OpenAI.APIError> & { error: Record<string, unknown> };
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 400, type: 'exceed_context_size_error', n_ctx: 2048, upstream: { status: 400, type: 'exceed_context_size_error', n_ctx: 2048 } });
    expect(error.n_prompt_tokens).toBeGreaterThan(2048);
    expect(error.message).toMatch(/exceeds the available context size/);
    await t.flushUsage();
    expect((await t.store.listUsage(account.id)).every((record) => record.costMicros === 0)).toBe(true);
    expect(await t.store.balanceOf(account.id)).toBe(1_000_000_000);
  });

  it('ten 500s the request itself caused leave the model answering everyone else', async () => {
    const { apiKey } = await t.createAccount({ credits: 1_000 });
    // The openai client retries a 5xx twice: thirty attempts of one body in all.
    const openai = new OpenAI({ baseURL: t.baseURL, apiKey, maxRetries: 2 });
    // Longer than the server's physical batch (512 tokens): llama.cpp answers 500.
    const tooLong = 'tokens '.repeat(700);
    for (let i = 0; i < 10; i++) {
      const err = await openai.embeddings.create({ model: 'tiny-embed', input: tooLong }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(err).toBeInstanceOf(OpenAI.APIError);
      const { status, error } = err as InstanceType<typeof OpenAI.APIError> & { error: { upstream?: { status: number; message: string } } };
      expect(status).toBe(502);
      // The server's own words, marked as the upstream's.
      expect(error.upstream?.status).toBe(500);
      expect(error.upstream?.message).toMatch(/too large to process/);
    }
    const answer = await openai.embeddings.create({ model: 'tiny-embed', input: 'a short one' });
    expect(answer.data).toHaveLength(1);
  }, 120_000);
});
