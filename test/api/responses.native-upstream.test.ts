// /v1/responses passed through to upstreams that speak OpenAI's Responses API
// (`responses: native`), against a fake upstream speaking its wire protocol, driven with
// the official openai client: the answer and the typed events relayed, the charge equal to
// the usage record and to the cost of the upstream's usage, errors mapped, and a client
// that leaves mid-stream.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { costMicros } from '../helpers/cost.js';
import { countTextTokens } from '../../src/models/tokens.js';
import type { UsageRecord } from '../../src/store/store.js';
import { DEFAULT_PIECES, FAKE_FUNCTION_CALL, FAKE_RESPONSE_USAGE, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js';
import { jsonOf } from '../helpers/json.js';
import { readWords, settledUsage } from '../helpers/mid-stream.js';
import { startApp, type TestApp } from '../helpers/start-app.js';

const PRICES = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };
const ANSWER = DEFAULT_PIECES.join('');
const UPSTREAM_COST = costMicros(PRICES, FAKE_RESPONSE_USAGE.input_tokens, FAKE_RESPONSE_USAGE.output_tokens);
const TOOLS: OpenAI.Responses.Tool[] = [
  { type: 'function', name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
];

let t: TestApp;
let upstream: FakeUpstream;
/** Fails every stream with an error event before anything else: a deployment to move on from. */
let failing: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  failing = await startFakeUpstream({ errorEventAfter: 0 });
  process.env.LMGATE_TEST_RESPONSES_KEY = 'sk-upstream-responses';
  t = await startApp({
    overrides: {
      tiers: { free: { rpm: 10_000, tpm: 10_000_000, concurrency: 100, models: ['*'] } },
      models: {
        'up-native': {
          price: { input: 1, output: 2 },
          deployments: [{ url: upstream.url, model: 'upstream-native', responses: 'native', api_key_env: 'LMGATE_TEST_RESPONSES_KEY' }],
        },
        // Failed on purpose below; its breaker must not open meanwhile.
        'up-native-flaky': { price: { input: 1, output: 2 }, deployments: [{ url: upstream.url, model: 'upstream-native', responses: 'native', circuit_breaker: { failures: 100 } }] },
        'up-translated': { price: { input: 1, output: 2 }, deployments: [{ url: upstream.url, model: 'upstream-chat' }] },
        'up-native-failover': {
          price: { input: 1, output: 2 },
          deployments: [
            { url: failing.url, model: 'upstream-native', responses: 'native', weight: 1000 },
            { url: upstream.url, model: 'upstream-native', responses: 'native', weight: 1 },
          ],
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  await upstream.close();
  await failing.close();
  delete process.env.LMGATE_TEST_RESPONSES_KEY;
});

/** A new account's client, and its bill once the usage is written. */
async function account(): Promise<{ client: OpenAI; apiKey: string; bill: () => Promise<{ chargedMicros: number; records: UsageRecord[] }> }> {
  const { account, apiKey } = await t.createAccount({ credits: 10 });
  return {
    client: t.client(apiKey),
    apiKey,
    async bill() {
      const records = await settledUsage(t, account.id);
      return { chargedMicros: 10_000_000 - (await t.store.balanceOf(account.id)), records };
    },
  };
}

function post(apiKey: string, body: object, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.baseURL}/responses`, {
    method: 'POST',
    signal,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('a deployment that speaks the Responses API', () => {
  it('gets the request on its /responses with its model name, its key and store: false; the response comes back with lmgate’s model id and its usage is charged', async () => {
    const { client, bill } = await account();
    upstream.behave({ reportedModel: 'upstream-native-2025-04-14' });
    const seen = upstream.requests.length;
    const response = await client.responses.create({ model: 'up-native', instructions: 'be brief', input: 'hi', max_output_tokens: 500, metadata: { ticket: '7' } });
    upstream.behave({});

    const forwarded = upstream.requests[seen]!;
    expect(forwarded.url).toBe('/v1/responses');
    expect(forwarded.headers.authorization).toBe('Bearer sk-upstream-responses');
    expect(forwarded.body).toEqual({ model: 'upstream-native', instructions: 'be brief', input: 'hi', max_output_tokens: 500, metadata: { ticket: '7' }, store: false });

    expect(response).toMatchObject({ id: 'resp_fake', object: 'response', status: 'completed', model: 'up-native', instructions: 'be brief', max_output_tokens: 500 });
    expect(response.output_text).toBe(ANSWER);
    expect(response.usage).toMatchObject(FAKE_RESPONSE_USAGE);

    const { chargedMicros, records } = await bill();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ model: 'up-native', status: 200, streamed: false, finishReason: 'stop', promptTokens: FAKE_RESPONSE_USAGE.input_tokens, completionTokens: FAKE_RESPONSE_USAGE.output_tokens });
    expect(records[0]!.costMicros).toBe(UPSTREAM_COST);
    expect(chargedMicros).toBe(UPSTREAM_COST);
  });

  it('passes tools and input items that only the Responses API has, which a model translated to chat refuses', async () => {
    const { client, apiKey, bill } = await account();
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'weather in Paris?' },
      { type: 'function_call', call_id: 'call_0', name: 'get_weather', arguments: '{"city":"Lyon"}' },
      { type: 'function_call_output', call_id: 'call_0', output: 'sunny' },
    ];
    const seen = upstream.requests.length;
    const response = await client.responses.create({ model: 'up-native', input, tools: TOOLS });
    expect(upstream.requests[seen]!.body).toMatchObject({ input, tools: TOOLS });
    expect(response.output[1]).toMatchObject({ type: 'function_call', ...FAKE_FUNCTION_CALL });
    const { records } = await bill();
    expect(records[0]).toMatchObject({ finishReason: 'tool_calls', costMicros: UPSTREAM_COST });

    const translated = await post(apiKey, { model: 'up-translated', input, tools: TOOLS });
    expect(translated.status).toBe(422);
    expect(Object.keys(((await jsonOf(translated)) as { errors: object }).errors).sort()).toEqual(['input.1.type', 'input.2.type', 'tools']);
  });

  it('streams the upstream’s typed events as they come, each under its own name, ending with response.completed; the upstream’s usage is charged', async () => {
    const { client, bill } = await account();
    upstream.behave({ reportedModel: 'upstream-native-2025-04-14' });
    const seen = upstream.requests.length;
    const stream = await client.responses.create({ model: 'up-native', input: 'hi', stream: true });
    const types: string[] = [];
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      expect(event.sequence_number).toBe(types.length - 1);
      if (event.type === 'response.created') expect(event.response.model).toBe('up-native');
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    upstream.behave({});
    expect(upstream.requests[seen]!.body).toMatchObject({ model: 'upstream-native', stream: true, store: false });
    expect(text).toBe(ANSWER);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...DEFAULT_PIECES.map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completed).toMatchObject({ model: 'up-native', status: 'completed', usage: FAKE_RESPONSE_USAGE });

    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ status: 200, streamed: true, finishReason: 'stop', promptTokens: FAKE_RESPONSE_USAGE.input_tokens, completionTokens: FAKE_RESPONSE_USAGE.output_tokens });
    expect(records[0]!.costMicros).toBe(UPSTREAM_COST);
    expect(chargedMicros).toBe(UPSTREAM_COST);
  });

  it('frames each event with its type as the event name, a function call’s events included, and ends with no [DONE]', async () => {
    const { apiKey } = await account();
    const res = await post(apiKey, { model: 'up-native', input: 'hi', tools: TOOLS, stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await res.text()).split('\n\n').filter((frame) => frame.length > 0);
    for (const frame of frames) {
      const [name, data] = frame.split('\n');
      expect(name!.slice('event: '.length)).toBe((JSON.parse(data!.slice('data: '.length)) as { type: string }).type);
    }
    expect(frames.some((frame) => frame.startsWith('event: response.function_call_arguments.delta\n'))).toBe(true);
    expect(frames.at(-1)).toMatch(/^event: response\.completed\n/);
  });
});

describe('upstream errors', () => {
  it('an upstream 4xx is relayed with its status and words; a 5xx is a 502; nothing is charged', async () => {
    const { client, bill } = await account();
    upstream.behave({ status: 400, errorMessage: "Invalid value for 'reasoning.effort'." });
    const rejected = await client.responses.create({ model: 'up-native-flaky', input: 'hi' }).catch((e: unknown) => e);
    const rejectedStream = await client.responses.create({ model: 'up-native-flaky', input: 'hi', stream: true }).catch((e: unknown) => e);
    upstream.behave({ status: 500 });
    const failed = await client.responses.create({ model: 'up-native-flaky', input: 'hi' }).catch((e: unknown) => e);
    upstream.behave({});
    for (const err of [rejected, rejectedStream]) {
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 400, message: "Invalid value for 'reasoning.effort'." });
    }
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const { chargedMicros, records } = await bill();
    expect(records.map((record) => [record.status, record.costMicros]).sort()).toEqual([
      [400, 0],
      [400, 0],
      [502, 0],
    ]);
    expect(chargedMicros).toBe(0);
  });

  it('an error event mid-stream ends the stream with the unified error, which the client raises; what was delivered is charged', async () => {
    const { client, bill } = await account();
    upstream.behave({ errorEventAfter: 2 });
    const stream = await client.responses.create({ model: 'up-native-flaky', input: 'hi', stream: true });
    let text = '';
    const err = await (async () => {
      for await (const event of stream) if (event.type === 'response.output_text.delta') text += event.delta;
    })().catch((e: unknown) => e);
    upstream.behave({});
    expect(text).toBe('Hello from');
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 502, message: 'The model backend returned an invalid response.' });
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ status: 502, streamed: true, completionTokens: 2 });
    expect(records[0]!.costMicros).toBe(costMicros(PRICES, records[0]!.promptTokens, 2));
    expect(chargedMicros).toBe(records[0]!.costMicros);
  });

  it('an error event before any other moves the stream to another deployment, unseen by the client', async () => {
    const { client, bill } = await account();
    const seenFailing = failing.requests.length;
    const stream = await client.responses.create({ model: 'up-native-failover', input: 'hi', stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    expect(failing.requests.length).toBe(seenFailing + 1);
    expect(completed).toMatchObject({ output: [{ content: [{ text: ANSWER }] }], usage: FAKE_RESPONSE_USAGE });
    expect((await bill()).chargedMicros).toBe(UPSTREAM_COST);
  });

  it('an answer that is not a response is a 502; one without usage is charged lmgate’s count and says so', async () => {
    const { client, bill } = await account();
    upstream.behave({ malformed: true });
    const malformed = await client.responses.create({ model: 'up-native-flaky', input: 'hi' }).catch((e: unknown) => e);
    upstream.behave({ noUsage: true });
    const uncounted = await client.responses.create({ model: 'up-native', input: 'hi' });
    upstream.behave({});
    expect(malformed).toBeInstanceOf(OpenAI.APIError);
    expect((malformed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    const outputTokens = countTextTokens(ANSWER);
    expect(uncounted.usage).toMatchObject({ output_tokens: outputTokens, total_tokens: uncounted.usage!.input_tokens + outputTokens });
    const { chargedMicros, records } = await bill();
    const answered = records.find((record) => record.status === 200)!;
    expect(answered).toMatchObject({ promptTokens: uncounted.usage!.input_tokens, completionTokens: outputTokens });
    expect(chargedMicros).toBe(costMicros(PRICES, answered.promptTokens, outputTokens));
  });

  it('stored responses stay refused with the 400, and reach no upstream', async () => {
    const { client } = await account();
    const seen = upstream.requests.length;
    for (const extra of [{ previous_response_id: 'resp_123' }, { store: true }]) {
      const err = await client.responses.create({ model: 'up-native', input: 'hi', ...extra }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 400, param: Object.keys(extra)[0] });
    }
    expect(upstream.requests).toHaveLength(seen);
  });
});

describe('a client that leaves mid-stream', () => {
  it('aborts the upstream request and is charged for the deltas it was sent', async () => {
    const { apiKey, bill } = await account();
    upstream.behave({ pieces: Array.from({ length: 200 }, (_, i) => ` word${i}`), chunkDelayMs: 20 });
    const seen = upstream.requests.length;
    const controller = new AbortController();
    const res = await post(apiKey, { model: 'up-native', input: 'go', stream: true }, controller.signal);
    await readWords(res, 3);
    controller.abort();

    expect(await upstream.requests[seen]!.closed).toBe(true);
    upstream.behave({});
    const { chargedMicros, records } = await bill();
    expect(records[0]).toMatchObject({ status: 499, streamed: true, finishReason: null });
    expect(records[0]!.completionTokens).toBeGreaterThanOrEqual(3);
    expect(records[0]!.completionTokens).toBeLessThan(200);
    expect(records[0]!.costMicros).toBe(costMicros(PRICES, records[0]!.promptTokens, records[0]!.completionTokens));
    expect(chargedMicros).toBe(records[0]!.costMicros);
  });
});
