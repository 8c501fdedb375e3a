// What a real llama.cpp llama-server answers, as lmgate sees it from upstream: how it counts
// tokens, how it reports usage for n > 1 and in streams, and its error bodies. These tests are
// the record the gateway's code is written against; when a llama.cpp upgrade changes one of
// these shapes, this suite says so before the gateway meets it in production.
//
// The model is tiny and random (test/llama/write-model.py): its text is noise, but it never
// samples an end-of-generation token, so every answer runs to max_tokens unless a stop sequence
// or the context's end comes first, and every count below is exact.
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonOf } from '../helpers/json.js';
import { startLlamaServer, type LlamaServer } from '../helpers/llama-server.js';

// Per slot: the helper's default 2048 tokens shared by its default 4 slots.
const SLOT_CONTEXT = 512;
// llama-server's default physical batch (-ub), the most an embedding can hold without splitting.
const UBATCH = 512;
const DEFAULT_SYSTEM_PROMPT = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';
// Byte tokens' ids are their bytes (see write-model.py): 120 is "x".
const TOKEN_X = 120;

const HELLO: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Hello there, how are you?' }];
const WEATHER_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

let chat: LlamaServer;
let embedder: LlamaServer;
let client: OpenAI;
let embedClient: OpenAI;

beforeAll(async () => {
  // Embeddings need a server of their own (--embeddings).
  [chat, embedder] = await Promise.all([startLlamaServer(), startLlamaServer({ embeddings: true })]);
  client = new OpenAI({ baseURL: chat.url, apiKey: 'x', maxRetries: 0 });
  embedClient = new OpenAI({ baseURL: embedder.url, apiKey: 'x', maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  await Promise.all([chat?.close(), embedder?.close()]);
});

async function post(origin: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** How many tokens the server's own tokenizer makes of `text`, special tokens parsed as such. */
async function tokenCount(origin: string, text: string): Promise<number> {
  const { tokens } = (await jsonOf(await post(origin, '/tokenize', { content: text }))) as { tokens: number[] };
  return tokens.length;
}

/** The prompt the chat template renders for these messages (and tools), as the server renders it. */
async function renderedPrompt(messages: ChatCompletionMessageParam[], tools?: ChatCompletionTool[]): Promise<string> {
  const { prompt } = (await jsonOf(await post(chat.origin, '/apply-template', { messages, tools }))) as { prompt: string };
  return prompt;
}

describe('llama-server chat completions', () => {
  it('counts the whole rendered template, default system prompt included, as prompt_tokens', async () => {
    const answer = await client.chat.completions.create({ model: 'any-name', messages: HELLO, max_tokens: 8 });

    const prompt = await renderedPrompt(HELLO);
    expect(prompt).toBe(
      `<|im_start|>system\n${DEFAULT_SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\n`,
    );
    const textTokens = await tokenCount(chat.origin, 'Hello there, how are you?');
    expect(answer.usage?.prompt_tokens).toBe(await tokenCount(chat.origin, prompt));
    expect(answer.usage?.prompt_tokens).toBeGreaterThan(textTokens + 40);
    expect(answer.usage).toMatchObject({ completion_tokens: 8, total_tokens: answer.usage!.prompt_tokens + 8 });
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toEqual(expect.any(Number));
    expect(answer.choices).toHaveLength(1);
    expect(answer.choices[0]).toMatchObject({ index: 0, finish_reason: 'length', message: { role: 'assistant', content: expect.any(String) } });
    // The alias it was started with, whatever the request named.
    expect(answer.model).toBe(chat.model);
    expect(answer.object).toBe('chat.completion');
  });

  it('renders tool definitions into the system prompt, so they cost hundreds of prompt tokens', async () => {
    const plain = await client.chat.completions.create({ model: chat.model, messages: HELLO, max_tokens: 8 });
    const withTool = await client.chat.completions.create({ model: chat.model, messages: HELLO, max_tokens: 8, tools: [WEATHER_TOOL] });

    const prompt = await renderedPrompt(HELLO, [WEATHER_TOOL]);
    expect(prompt).toContain(`${DEFAULT_SYSTEM_PROMPT}\n\n# Tools\n`);
    // Jinja's tojson: keys in the request's order, ", " and ": " between them.
    expect(prompt).toContain(
      '<tools>\n{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city", ' +
        '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n</tools>',
    );
    expect(prompt).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>');
    expect(withTool.usage?.prompt_tokens).toBe(await tokenCount(chat.origin, prompt));
    expect(withTool.usage!.prompt_tokens - plain.usage!.prompt_tokens).toBeGreaterThan(300);
    expect(withTool.usage?.completion_tokens).toBe(8);
  });

  it('reports one choice\'s completion_tokens for n: 2, not the sum of both', async () => {
    const single = await client.chat.completions.create({ model: chat.model, messages: HELLO, max_tokens: 8 });
    const answer = await client.chat.completions.create({ model: chat.model, messages: HELLO, max_tokens: 8, n: 2 });

    expect(answer.choices.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [0, 'length'],
      [1, 'length'],
    ]);
    // Two choices of 8 tokens were generated; OpenAI would say 16.
    expect(answer.usage).toMatchObject({
      prompt_tokens: single.usage!.prompt_tokens,
      completion_tokens: 8,
      total_tokens: single.usage!.prompt_tokens + 8,
    });
  });

  it('streams n: 2 with one usage chunk per choice, each right after that choice finishes', async () => {
    const stream = await client.chat.completions.create({
      model: chat.model,
      messages: HELLO,
      max_tokens: 3,
      n: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    // Content chunks of the two choices interleave in any order; the ends and usage do not.
    const ends = chunks
      .filter((chunk) => chunk.usage || chunk.choices.some((choice) => choice.finish_reason !== null))
      .map((chunk) => (chunk.usage ? { usage: chunk.usage, choices: chunk.choices } : { index: chunk.choices[0]!.index, finish: chunk.choices[0]!.finish_reason }));
    const usage = { completion_tokens: 3, prompt_tokens: expect.any(Number), total_tokens: expect.any(Number), prompt_tokens_details: { cached_tokens: expect.any(Number) } };
    expect(ends).toEqual([
      { index: expect.any(Number), finish: 'length' },
      { usage, choices: [] },
      { index: expect.any(Number), finish: 'length' },
      { usage, choices: [] },
    ]);
    expect(new Set(ends.filter((end) => 'index' in end).map((end) => end.index))).toEqual(new Set([0, 1]));
    // The first usage chunk arrives while the other choice is still generating, and the last
    // chunk is the second usage chunk: a relay that ends the stream at the first usage loses a choice.
    expect(chunks.at(-1)?.usage).toBeTruthy();
    // Every chunk other than those holds exactly one choice.
    expect(chunks.filter((chunk) => !chunk.usage).every((chunk) => chunk.choices.length === 1)).toBe(true);
    // Each choice's deltas start with the assistant role.
    for (const index of [0, 1]) {
      const first = chunks.find((chunk) => chunk.choices[0]?.index === index);
      expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: null });
    }
  });

  it('stops at a stop sequence it generated, leaves it out of the text, and counts its token', async () => {
    const answer = await client.chat.completions.create({
      model: chat.model,
      messages: HELLO,
      max_tokens: 8,
      stop: ['x'],
      logit_bias: { [TOKEN_X]: 100 },
    });

    expect(answer.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: '' } });
    expect(answer.usage?.completion_tokens).toBe(1);
  });

  it('ends with finish_reason length at the slot\'s context end, before max_tokens', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'hello '.repeat(100) }];
    const promptTokens = await tokenCount(chat.origin, await renderedPrompt(messages));
    expect(promptTokens).toBeLessThan(SLOT_CONTEXT - 8);

    const answer = await client.chat.completions.create({ model: chat.model, messages, max_tokens: SLOT_CONTEXT });

    expect(answer.choices[0]?.finish_reason).toBe('length');
    expect(answer.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: SLOT_CONTEXT - promptTokens });
  });

  it('refuses a prompt longer than the slot\'s context with 400 exceed_context_size_error, streaming or not', async () => {
    const messages = [{ role: 'user', content: 'hello '.repeat(600) }];
    const promptTokens = await tokenCount(chat.origin, await renderedPrompt(messages as ChatCompletionMessageParam[]));
    const expected = {
      error: {
        code: 400,
        message: `request (${promptTokens} tokens) exceeds the available context size (${SLOT_CONTEXT} tokens), try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: promptTokens,
        n_ctx: SLOT_CONTEXT,
      },
    };

    for (const stream of [false, true]) {
      const res = await post(chat.origin, '/v1/chat/completions', { messages, max_tokens: 4, stream });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await jsonOf(res)).toEqual(expected);
    }
  });
});

describe('llama-server legacy completions', () => {
  it('counts only the prompt\'s own tokens: no template', async () => {
    const answer = await client.completions.create({ model: chat.model, prompt: 'Hello there', max_tokens: 4 });

    expect(answer.usage).toMatchObject({ prompt_tokens: await tokenCount(chat.origin, 'Hello there'), completion_tokens: 4 });
    expect(answer.usage?.prompt_tokens).toBe(4);
    expect(answer.object).toBe('text_completion');
    expect(answer.choices[0]).toMatchObject({ index: 0, finish_reason: 'length', text: expect.any(String), logprobs: null });
  });
});

describe('llama-server embeddings', () => {
  it('reports prompt_tokens and total_tokens, the sum over the inputs, and echoes the model asked for', async () => {
    const inputs = ['Hello there', 'How are you?'];
    const answer = await embedClient.embeddings.create({ model: 'any-name', input: inputs });

    const counts = await Promise.all(inputs.map((input) => tokenCount(embedder.origin, input)));
    const total = counts[0]! + counts[1]!;
    expect(answer.usage).toEqual({ prompt_tokens: total, total_tokens: total });
    expect(answer.data.map((item) => [item.object, item.index, item.embedding.length])).toEqual([
      ['embedding', 0, 64],
      ['embedding', 1, 64],
    ]);
    expect(answer.model).toBe('any-name');
  });

  it('answers 500 server_error to an input longer than the physical batch', async () => {
    const input = 'hello '.repeat(300);
    const inputTokens = await tokenCount(embedder.origin, input);
    expect(inputTokens).toBeGreaterThan(UBATCH);

    const res = await post(embedder.origin, '/v1/embeddings', { input });

    expect(res.status).toBe(500);
    expect(await jsonOf(res)).toEqual({
      error: {
        code: 500,
        message: `input (${inputTokens} tokens) is too large to process. increase the physical batch size (current batch size: ${UBATCH})`,
        type: 'server_error',
      },
    });
  });

  it('answers 501 to embeddings on a server started without --embeddings', async () => {
    const res = await post(chat.origin, '/v1/embeddings', { input: 'Hello there' });

    expect(res.status).toBe(501);
    expect(await jsonOf(res)).toEqual({
      error: { code: 501, message: 'This server does not support embeddings. Start it with `--embeddings`', type: 'not_supported_error' },
    });
  });
});
