// lmgate in front of an Anthropic-speaking upstream (a fake one on loopback speaking the
// Messages API's real wire protocol), driven with the official openai client: whole and
// streamed answers, tools, exact charges, upstream errors, and a client that leaves.
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { countTextTokens } from '../../src/models/tokens.js';
import type { UsageRecord } from '../../src/store/store.js';
import { ANTHROPIC_PIECES, ANTHROPIC_USAGE, startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { jsonOf } from '../helpers/json.js';
import { readWords } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 3_000_000, outputPerMTokMicros: 15_000_000 };
const START_MICROS = 10_000_000;
const ANSWER = ANTHROPIC_PIECES.join('');
/** Every input token is billed, the cached ones too. */
const PROMPT_TOKENS = ANTHROPIC_USAGE.input_tokens + ANTHROPIC_USAGE.cache_read_input_tokens;
const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const TOOL_USE = { id: 'toolu_01Weather', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } };

let t: TestApp;
let primary: FakeAnthropic;
let secondary: FakeAnthropic;

beforeAll(async () => {
  primary = await startFakeAnthropic();
  secondary = await startFakeAnthropic();
  process.env.LMGATE_TEST_ANTHROPIC_KEY = 'sk-ant-upstream-secret';
  const breaker = { failures: 1000 };
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        claude: {
          price: { input: 3, output: 15 },
          max_output: 4096,
          deployments: [{ kind: 'anthropic', url: primary.url, model: 'claude-sonnet-upstream', api_key_env: 'LMGATE_TEST_ANTHROPIC_KEY', circuit_breaker: breaker }],
        },
        'claude-pair': {
          price: { input: 3, output: 15 },
          deployments: [
            { kind: 'anthropic', url: primary.url, model: 'claude-primary', weight: 1_000_000, circuit_breaker: breaker },
            { kind: 'anthropic', url: secondary.url, model: 'claude-secondary', weight: 1, circuit_breaker: breaker, anthropic_version: '2024-01-01' },
          ],
        },
        'claude-fragile': {
          deployments: [{ kind: 'anthropic', url: secondary.url, model: 'claude-fragile', circuit_breaker: { failures: 2, cooldown_ms: 60_000 } }],
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await primary.close();
  await secondary.close();
  delete process.env.LMGATE_TEST_ANTHROPIC_KEY;
});
beforeEach(() => {
  primary.behave({});
  secondary.behave({});
});

async function account(): Promise<{ id: string; client: OpenAI; apiKey: string }> {
  const { account: created, apiKey } = await t.createAccount({ credits: START_MICROS / 1_000_000 });
  return { id: created.id, client: t.client(apiKey), apiKey };
}

/** The account's one usage record, once the writer has stored it. */
async function onlyRecord(accountId: string): Promise<UsageRecord> {
  let records = await t.store.listUsage(accountId);
  for (let i = 0; i < 200 && records.length === 0; i++) {
    await t.flushUsage();
    records = await t.store.listUsage(accountId);
    if (records.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(records).toHaveLength(1);
  return records[0]!;
}

/** The balance moved by exactly the record's cost, and that cost is the price of its tokens. */
async function expectCharged(accountId: string, record: UsageRecord): Promise<void> {
  expect(record.costMicros).toBe(costMicros(PRICES, record.promptTokens, record.completionTokens));
  expect(await t.store.balanceOf(accountId)).toBe(START_MICROS - record.costMicros);
}

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(APIError);
  return err as APIError;
}

describe('answers', () => {
  it('a whole answer: POST /v1/messages with x-api-key and anthropic-version, translated back and charged Anthropic’s usage', async () => {
    const { id, client } = await account();
    const seen = primary.requests.length;
    const completion = await client.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello.' },
      ],
      max_tokens: 300,
      temperature: 0.5,
      stop: ['###'],
    });
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'claude' });
    expect(completion.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' });
    expect(completion.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: ANTHROPIC_USAGE.output_tokens, total_tokens: PROMPT_TOKENS + ANTHROPIC_USAGE.output_tokens });

    const forwarded = primary.requests[seen]!;
    expect(forwarded).toMatchObject({ method: 'POST', url: '/v1/messages' });
    expect(forwarded.headers).toMatchObject({ 'x-api-key': 'sk-ant-upstream-secret', 'anthropic-version': '2023-06-01' });
    expect(forwarded.headers.authorization).toBeUndefined();
    expect(forwarded.body).toEqual({
      model: 'claude-sonnet-upstream',
      max_tokens: 300,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Say hello.' }],
      temperature: 0.5,
      stop_sequences: ['###'],
    });

    const record = await onlyRecord(id);
    expect(record).toMatchObject({ model: 'claude', status: 200, streamed: false, finishReason: 'stop', promptTokens: PROMPT_TOKENS, completionTokens: ANTHROPIC_USAGE.output_tokens });
    await expectCharged(id, record);
  });

  it('without max_tokens, Anthropic is asked for the model’s output ceiling (it has no default)', async () => {
    const { client } = await account();
    const seen = primary.requests.length;
    await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }] });
    expect(primary.requests[seen]!.body.max_tokens).toBe(4096);
  });

  it('a streamed answer: chunks as the events arrive, usage when asked for, and the charge equals the usage record', async () => {
    const { id, client } = await account();
    const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Stream it.' }], stream: true, stream_options: { include_usage: true } });
    const pieces: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'claude' });
      const choice = chunk.choices[0];
      if (choice?.delta.content) pieces.push(choice.delta.content);
      finish = choice?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(pieces).toEqual(ANTHROPIC_PIECES);
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: ANTHROPIC_USAGE.output_tokens });
    expect(primary.requests.at(-1)!.body.stream).toBe(true);
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ status: 200, streamed: true, finishReason: 'stop', promptTokens: PROMPT_TOKENS, completionTokens: ANTHROPIC_USAGE.output_tokens });
    await expectCharged(id, record);
  });
});

describe('tools', () => {
  it('tools go out as Anthropic tools; a tool_use comes back as a tool call, and its result goes back as a tool_result', async () => {
    const { id, client } = await account();
    primary.behave({ toolUse: TOOL_USE });
    const seen = primary.requests.length;
    const completion = await client.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([{ id: TOOL_USE.id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(TOOL_USE.input) } }]);
    expect(primary.requests[seen]!.body).toMatchObject({
      tools: [{ name: 'get_weather', description: 'Weather in a city', input_schema: WEATHER_TOOL.function.parameters }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    });
    await expectCharged(id, await onlyRecord(id));

    primary.behave({});
    await client.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        choice.message as OpenAI.ChatCompletionAssistantMessageParam,
        { role: 'tool', tool_call_id: TOOL_USE.id, content: '18°C, sunny' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(primary.requests.at(-1)!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'text', text: ANSWER }, { type: 'tool_use', ...TOOL_USE }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: TOOL_USE.id, content: '18°C, sunny' }] },
    ]);
  });

  it('streamed, a tool call arrives as OpenAI’s tool call deltas (input_json_delta → arguments)', async () => {
    const { id, client } = await account();
    primary.behave({ toolUse: TOOL_USE });
    const stream = await client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL], stream: true });
    let content = '';
    const calls: { id?: string; name: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      content += choice?.delta.content ?? '';
      for (const call of choice?.delta.tool_calls ?? []) {
        const known = (calls[call.index] ??= { name: '', arguments: '' });
        if (call.id) known.id = call.id;
        known.name += call.function?.name ?? '';
        known.arguments += call.function?.arguments ?? '';
      }
      finish = choice?.finish_reason ?? finish;
    }
    expect(content).toBe(ANSWER);
    expect(calls).toEqual([{ id: TOOL_USE.id, name: 'get_weather', arguments: JSON.stringify(TOOL_USE.input) }]);
    expect(finish).toBe('tool_calls');
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ finishReason: 'tool_calls', promptTokens: PROMPT_TOKENS, completionTokens: ANTHROPIC_USAGE.output_tokens });
    await expectCharged(id, record);
  });
});

describe('upstream errors', () => {
  it('an invalid_request_error (400) comes back as 400 in the unified body with Anthropic’s message, never its address or key', async () => {
    const { id, apiKey } = await account();
    primary.behave({ status: 400, errorType: 'invalid_request_error', errorMessage: 'messages: roles must alternate' });
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(400);
    const body = await jsonOf(res);
    expect(body.error).toMatchObject({ code: 400, message: 'messages: roles must alternate', request_id: res.headers.get('x-request-id') });
    expect(JSON.stringify(body)).not.toContain(primary.hostPort);
    expect((await onlyRecord(id)).costMicros).toBe(0);
  });

  it('an authentication_error (401: the operator’s key) is a bad upstream, 502, without the key', async () => {
    const { client } = await account();
    primary.behave({ status: 401, errorType: 'authentication_error', errorMessage: 'invalid x-api-key sk-ant-upstream-secret' });
    const err = await failure(client.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }] }));
    expect(err.status).toBe(502);
    expect(JSON.stringify(err.error)).not.toContain('sk-ant-upstream-secret');
  });

  it('overloaded_error (529) and rate_limit_error (429) move to the other deployment, which is sent its own anthropic-version', async () => {
    const { client } = await account();
    for (const [status, errorType] of [[529, 'overloaded_error'], [429, 'rate_limit_error']] as const) {
      primary.behave({ status, errorType });
      const seen = secondary.requests.length;
      const completion = await client.chat.completions.create({ model: 'claude-pair', messages: [{ role: 'user', content: 'x' }] });
      expect(completion.choices[0]!.message.content).toBe(ANSWER);
      expect(secondary.requests.length).toBe(seen + 1);
      expect(secondary.requests.at(-1)!.headers['anthropic-version']).toBe('2024-01-01');
    }
  });

  it('overloaded on the only deployment: 503; repeated failures open its circuit breaker, so it is not called again', async () => {
    const { client } = await account();
    secondary.behave({ status: 529, errorType: 'overloaded_error' });
    const seen = secondary.requests.length;
    for (let i = 0; i < 2; i++) expect((await failure(client.chat.completions.create({ model: 'claude-fragile', messages: [{ role: 'user', content: 'x' }] }))).status).toBe(503);
    secondary.behave({ status: 500, errorType: 'api_error' });
    expect((await failure(client.chat.completions.create({ model: 'claude-fragile', messages: [{ role: 'user', content: 'x' }] }))).status).toBe(503);
    expect(secondary.requests.length).toBe(seen + 2);
  });

  it('an error event before any text moves to the other deployment; after text, the stream ends with an error and what was sent is charged', async () => {
    const { client } = await account();
    primary.behave({ errorEventAfter: 0 });
    const stream = await client.chat.completions.create({ model: 'claude-pair', messages: [{ role: 'user', content: 'x' }], stream: true });
    let content = '';
    for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    expect(content).toBe(ANSWER);
    expect(secondary.requests.at(-1)!.body.model).toBe('claude-secondary');

    const { id, client: second } = await account();
    primary.behave({ errorEventAfter: 2 });
    const broken = await second.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }], stream: true });
    let partial = '';
    const err = await failure(
      (async () => {
        for await (const chunk of broken) partial += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    expect(err.message).toBe('The model backend returned an invalid response.');
    expect(partial).toBe(ANTHROPIC_PIECES.slice(0, 2).join(''));
    const record = await onlyRecord(id);
    // Anthropic tells the output count only at the end: what was sent is counted.
    expect(record).toMatchObject({ status: 502, promptTokens: PROMPT_TOKENS, completionTokens: countTextTokens(partial) });
    await expectCharged(id, record);
  });

  it('a request Anthropic cannot express is refused with 422 before any upstream call', async () => {
    const { apiKey } = await account();
    const seen = primary.requests.length;
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', n: 2, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(422);
    expect(await jsonOf(res)).toMatchObject({ error: { code: 422 }, errors: { n: ['must be 1 for this model'] } });
    expect(primary.requests.length).toBe(seen);
  });
});

describe('a client that leaves', () => {
  it('disconnecting mid-stream aborts the upstream call and pays for what was delivered', async () => {
    const { id, apiKey } = await account();
    primary.behave({ pieces: Array.from({ length: 200 }, (_, i) => ` word${i}`), deltaDelayMs: 20 });
    const seen = primary.requests.length;
    const controller = new AbortController();
    const res = await fetch(`${t.baseURL}/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude', stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    await readWords(res, 3);
    controller.abort();

    expect(await primary.requests[seen]!.closed).toBe(true);
    const record = await onlyRecord(id);
    expect(record).toMatchObject({ status: 499, streamed: true, promptTokens: PROMPT_TOKENS });
    expect(record.completionTokens).toBeGreaterThanOrEqual(3 * countTextTokens(' word0'));
    expect(record.completionTokens).toBeLessThan(200 * countTextTokens(' word0'));
    await expectCharged(id, record);
  });
});
