// The translation between chat completions and Anthropic's Messages API, tested as round
// trips on generated conversations, answers and streams: what goes to Anthropic and comes
// back keeps its messages, tool calls, stop reason and usage.
import type { MessageCreateParamsBase } from '@anthropic-ai/sdk/resources/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../../src/chat/chat-request.js';
import type { ChatChunkBody, ChatCompletionBody } from '../../src/anthropic/chat-wire.js';
import { anthropicErrorBody, anthropicErrorType, statusOfAnthropicErrorType } from '../../src/anthropic/error-types.js';
import type { AnthropicMessage, AnthropicRequest, AnthropicStreamEvent } from '../../src/anthropic/messages-wire.js';
import { anthropicToChatRequest, chatToAnthropicRequest } from '../../src/anthropic/request-translation.js';
import { anthropicToChatCompletion, anthropicUsage, chatCompletionToAnthropic } from '../../src/anthropic/response-translation.js';
import { usageOfAnthropic } from '../../src/models/upstream/usage-readers.js';
import { UsageMeter } from '../../src/models/upstream/usage-meter.js';
import { AnthropicStreamError, AnthropicToChatStream, ChatToAnthropicStream } from '../../src/anthropic/stream-translation.js';
import { ValidationError } from '../../src/errors.js';

// ---------------------------------------------------------------------------------------
// Generators

const text = fc.string({ maxLength: 40 });
const someText = fc.string({ minLength: 1, maxLength: 40 });
const name = fc.stringMatching(/^[a-zA-Z0-9_-]{1,24}$/);
const callId = fc.stringMatching(/^toolu_[a-zA-Z0-9]{6,16}$/);
/** Tool arguments as the model writes them: JSON text of an object. */
const argsObject = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
const toolCall = fc.record({ id: callId, type: fc.constant('function' as const), function: fc.record({ name, arguments: argsObject.map((args) => JSON.stringify(args)) }) });

const textPart = fc.record({ type: fc.constant('text' as const), text });
const imagePart = fc.record({
  type: fc.constant('image_url' as const),
  image_url: fc.record({
    url: fc.oneof(
      fc.base64String({ maxLength: 24 }).map((data) => `data:image/png;base64,${data}`),
      fc.webUrl(),
    ),
  }),
});

const userMessage: fc.Arbitrary<ChatMessage> = fc.record({
  role: fc.constant('user' as const),
  content: fc.oneof(text, fc.array(fc.oneof(textPart, imagePart), { minLength: 1, maxLength: 3 })),
});
const assistantMessage: fc.Arbitrary<ChatMessage> = fc.oneof(
  fc.record({ role: fc.constant('assistant' as const), content: text }),
  fc.record({
    role: fc.constant('assistant' as const),
    content: fc.option(someText, { nil: null }),
    tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 3 }),
  }),
);
/** The answers to a turn's tool calls, one tool message each. */
const toolAnswers: fc.Arbitrary<ChatMessage[]> = fc.array(
  fc.record({ role: fc.constant('tool' as const), tool_call_id: callId, content: fc.oneof(text, fc.tuple(textPart).map((parts) => [...parts])) }),
  { minLength: 1, maxLength: 3 },
);

const chatRequest: fc.Arbitrary<ChatRequest> = fc
  .record(
    {
      // Anthropic has one system prompt, before the conversation: system messages lead.
      system: fc.array(text, { maxLength: 2 }),
      turns: fc.array(fc.oneof(userMessage.map((m) => [m]), assistantMessage.map((m) => [m]), toolAnswers), { minLength: 1, maxLength: 6 }),
      max_tokens: fc.integer({ min: 1, max: 100_000 }),
      stop: fc.array(someText, { minLength: 1, maxLength: 4 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      stream: fc.constant(true as const),
      tools: fc.array(
        fc.record({
          type: fc.constant('function' as const),
          function: fc.record({ name, description: text, parameters: fc.constant({ type: 'object', properties: { q: { type: 'string' } } }) }, { requiredKeys: ['name', 'parameters'] }),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      tool_choice: fc.oneof(fc.constantFrom('none' as const, 'auto' as const, 'required' as const), name.map((n) => ({ type: 'function' as const, function: { name: n } }))),
      parallel_tool_calls: fc.constant(false as const),
      user: someText,
    },
    { requiredKeys: ['system', 'turns', 'max_tokens'] },
  )
  .map(({ system, turns, ...rest }) => {
    const request: ChatRequest = { model: 'claude-test', messages: [...system.map((content): ChatMessage => ({ role: 'system', content })), ...turns.flat()], ...rest };
    // parallel_tool_calls says something only beside a tool_choice that allows calls.
    if (request.tool_choice === undefined || request.tool_choice === 'none') delete request.parallel_tool_calls;
    return request;
  });

// ---------------------------------------------------------------------------------------
// Requests

describe('requests', () => {
  it('a chat request translated to Anthropic and back keeps its messages, tools, tool calls and parameters', () => {
    fc.assert(
      fc.property(chatRequest, (chat) => {
        const anthropic = chatToAnthropicRequest(chat, { model: chat.model, maxTokens: chat.max_tokens!, stream: chat.stream === true });
        // Anthropic's own type for the request: the translation writes only fields it declares.
        const params: MessageCreateParamsBase = anthropic;
        expect(params.max_tokens).toBe(chat.max_tokens);
        expect(anthropicToChatRequest(anthropic)).toEqual(chat);
      }),
      { numRuns: 300 },
    );
  });

  it('gathers system and developer messages into the system prompt and answers to parallel calls into one user turn', () => {
    const anthropic = chatToAnthropicRequest(
      {
        model: 'm',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Weather in Paris and Rome?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }, { id: 'b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] },
          { role: 'tool', tool_call_id: 'a', content: 'sunny' },
          { role: 'tool', tool_call_id: 'b', content: 'rain' },
          { role: 'developer', content: 'Answer in French.' },
        ],
        temperature: 1.6,
      },
      { model: 'claude-x', maxTokens: 512, stream: false },
    );
    expect(anthropic).toEqual({
      model: 'claude-x',
      max_tokens: 512,
      system: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in French.' }],
      temperature: 1,
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'weather', input: { city: 'Paris' } }, { type: 'tool_use', id: 'b', name: 'weather', input: { city: 'Rome' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'sunny' }, { type: 'tool_result', tool_use_id: 'b', content: 'rain' }] },
      ],
    });
  });

  it('refuses with a 422 field what Anthropic cannot express', () => {
    const refused = (chat: Partial<ChatRequest>) => {
      try {
        chatToAnthropicRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...chat }, { model: 'm', maxTokens: 1, stream: false });
      } catch (err) {
        expect(err).toBeInstanceOf(ValidationError);
        return Object.keys((err as ValidationError).fields);
      }
      throw new Error('not refused');
    };
    expect(refused({ n: 2 })).toEqual(['n']);
    expect(refused({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1]' } }] }] })).toEqual(['messages.0.tool_calls.0.function.arguments']);
    expect(refused({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] })).toEqual(['messages.0.content.0.type']);
    expect(refused({ messages: [{ role: 'function', name: 'f', content: 'x' }] })).toEqual(['messages.0.role']);
  });
});

/** An Anthropic request as its clients write it: turns alternate, a user turn answers tools or speaks. */
const anthropicRequest: fc.Arbitrary<AnthropicRequest> = fc
  .record(
    {
      system: fc.oneof(text, fc.array(fc.record({ type: fc.constant('text' as const), text }), { minLength: 2, maxLength: 3 })),
      turns: fc.array(
        fc.tuple(
          fc.oneof(
            text,
            fc.array(
              fc.oneof(
                fc.record({ type: fc.constant('text' as const), text }),
                fc.record({ type: fc.constant('image' as const), source: fc.record({ type: fc.constant('url' as const), url: fc.webUrl() }) }),
                fc.record({
                  type: fc.constant('image' as const),
                  source: fc.record({ type: fc.constant('base64' as const), media_type: fc.constantFrom('image/png' as const, 'image/webp' as const), data: fc.base64String({ maxLength: 16 }) }),
                }),
              ),
              { minLength: 1, maxLength: 3 },
            ),
            fc.array(fc.record({ type: fc.constant('tool_result' as const), tool_use_id: callId, content: fc.oneof(text, fc.tuple(fc.record({ type: fc.constant('text' as const), text })).map((b) => [...b])) }), { minLength: 1, maxLength: 3 }),
          ),
          fc.oneof(
            text,
            fc.tuple(fc.option(someText, { nil: undefined }), fc.array(fc.record({ type: fc.constant('tool_use' as const), id: callId, name, input: argsObject }), { minLength: 1, maxLength: 3 })).map(([lead, uses]) => [
              ...(lead === undefined ? [] : [{ type: 'text' as const, text: lead }]),
              ...uses,
            ]),
          ),
        ),
        { minLength: 1, maxLength: 4 },
      ),
      max_tokens: fc.integer({ min: 1, max: 100_000 }),
      stop_sequences: fc.array(someText, { minLength: 1, maxLength: 4 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      top_p: fc.double({ min: 0, max: 1, noNaN: true }),
      stream: fc.constant(true as const),
      tools: fc.array(fc.record({ name, description: text, input_schema: fc.constant({ type: 'object' as const, properties: { q: { type: 'string' } } }) }), { minLength: 1, maxLength: 3 }),
      tool_choice: fc.oneof(
        fc.constant({ type: 'none' as const }),
        fc.record({ type: fc.constantFrom('auto' as const, 'any' as const), disable_parallel_tool_use: fc.constant(true) }, { requiredKeys: ['type'] }),
        fc.record({ type: fc.constant('tool' as const), name, disable_parallel_tool_use: fc.constant(true) }, { requiredKeys: ['type', 'name'] }),
      ),
      metadata: fc.record({ user_id: someText }),
    },
    { requiredKeys: ['turns', 'max_tokens'] },
  )
  .map(({ turns, ...rest }) => ({
    model: 'claude-test',
    ...rest,
    messages: turns.flatMap(([user, assistant]) => [
      { role: 'user' as const, content: user },
      { role: 'assistant' as const, content: assistant },
    ]),
  }));

describe('Anthropic requests', () => {
  it('an Anthropic request translated to chat and back keeps its system prompt, turns, tool uses, tool results and parameters', () => {
    fc.assert(
      fc.property(anthropicRequest, (request) => {
        const chat = anthropicToChatRequest(request);
        expect(chatToAnthropicRequest(chat, { model: request.model, maxTokens: request.max_tokens, stream: request.stream === true })).toEqual(request);
      }),
      { numRuns: 300 },
    );
  });
});

// ---------------------------------------------------------------------------------------
// Answers

const usage = fc.record({ prompt: fc.nat({ max: 1_000_000 }), completion: fc.nat({ max: 1_000_000 }) });

const chatCompletion: fc.Arbitrary<ChatCompletionBody> = fc
  .record({
    id: fc.stringMatching(/^msg_[a-zA-Z0-9]{8,24}$/),
    message: fc.oneof(
      fc.record({ content: text, finish: fc.constantFrom('stop' as const, 'length' as const, 'content_filter' as const) }),
      fc.record({ content: fc.option(someText, { nil: null }), tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 3 }), finish: fc.constant('tool_calls' as const) }),
    ),
    usage,
  })
  .map(({ id, message, usage }) => ({
    id,
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'claude-test',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: message.content, refusal: null, ...('tool_calls' in message ? { tool_calls: message.tool_calls } : {}) },
        logprobs: null,
        finish_reason: message.finish,
      },
    ],
    usage: { prompt_tokens: usage.prompt, completion_tokens: usage.completion, total_tokens: usage.prompt + usage.completion },
  }));

describe('answers', () => {
  it('a chat completion translated to an Anthropic message and back keeps its content, tool calls, finish reason and usage', () => {
    fc.assert(
      fc.property(chatCompletion, (completion) => {
        const message = chatCompletionToAnthropic(completion, 'claude-test');
        expect(message.usage).toEqual({ input_tokens: completion.usage.prompt_tokens, output_tokens: completion.usage.completion_tokens });
        expect(anthropicToChatCompletion(message, 'claude-test', completion.created)).toEqual(completion);
      }),
      { numRuns: 300 },
    );
  });

  it('counts cached input and cache writes as prompt tokens, each part shown apart, and maps every stop reason', () => {
    const message: AnthropicMessage = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'Hi' }],
      stop_reason: 'stop_sequence',
      stop_sequence: '###',
      usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000 },
    };
    const completion = anthropicToChatCompletion(message, 'mine', 1);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hi' }, finish_reason: 'stop' });
    expect(completion.usage).toEqual({ prompt_tokens: 1110, completion_tokens: 5, total_tokens: 1115, prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 100 } });
    expect(usageOfAnthropic(message.usage)).toEqual({ promptTokens: 1110, completionTokens: 5, cachedTokens: 1000, cacheWriteTokens: 100 });
    // Writes split by lifetime, where the API says.
    const split = usageOfAnthropic({ ...message.usage, cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 60 } });
    expect(split).toEqual({ promptTokens: 1110, completionTokens: 5, cachedTokens: 1000, cacheWriteTokens: 40, cacheWrite1hTokens: 60 });
    // And back in Anthropic's terms: the plain input beside the cache's parts.
    expect(anthropicUsage(split)).toEqual({
      input_tokens: 10,
      output_tokens: 5,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 100,
      cache_creation: { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 60 },
    });
    const reasons = (['end_turn', 'stop_sequence', 'pause_turn', 'max_tokens', 'model_context_window_exceeded', 'tool_use', 'refusal'] as const).map(
      (stop_reason) => anthropicToChatCompletion({ ...message, stop_reason }, 'mine', 1).choices[0]!.finish_reason,
    );
    expect(reasons).toEqual(['stop', 'stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter']);
  });
});

// ---------------------------------------------------------------------------------------
// Streams

/** Text cut at the given points: how a server sends it in pieces. */
function cut(whole: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (whole.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of at) {
    pieces.push(whole.slice(from, point));
    from = point;
  }
  pieces.push(whole.slice(from));
  return pieces;
}

/** An Anthropic answer as a model writes it: text, then tool calls. */
const anthropicMessage: fc.Arbitrary<{ message: AnthropicMessage; cuts: number[][] }> = fc
  .record({
    id: fc.stringMatching(/^msg_[a-zA-Z0-9]{8,24}$/),
    text: fc.option(someText, { nil: undefined }),
    tools: fc.array(fc.record({ id: callId, name, input: argsObject }), { maxLength: 3 }),
    stop: fc.constantFrom('end_turn' as const, 'max_tokens' as const, 'tool_use' as const, 'refusal' as const),
    usage,
    cuts: fc.array(fc.array(fc.nat(), { maxLength: 5 }), { minLength: 4, maxLength: 4 }),
  })
  .map(({ id, text, tools, stop, usage, cuts }) => ({
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model: 'claude-upstream',
      content: [...(text === undefined ? [] : [{ type: 'text' as const, text }]), ...tools.map((tool) => ({ type: 'tool_use' as const, ...tool }))],
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: usage.prompt, output_tokens: usage.completion },
    },
    cuts,
  }));

/** The events an Anthropic server sends for `message`, text and JSON in pieces, pings between. */
function anthropicEvents(message: AnthropicMessage, cuts: number[][]): AnthropicStreamEvent[] {
  const events: AnthropicStreamEvent[] = [{ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } }, { type: 'ping' }];
  message.content.forEach((block, index) => {
    const points = cuts[index % cuts.length]!;
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of cut(block.text, points)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { ...block, input: {} } });
      for (const piece of ['', ...cut(JSON.stringify(block.input), points)]) events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } });
  events.push({ type: 'message_stop' });
  return events;
}

/** A chat stream's chunks put together, as a client does. */
function accumulateChat(chunks: ChatChunkBody[]) {
  let content = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  let finish: string | null = null;
  let usage: unknown;
  for (const chunk of chunks) {
    if (chunk.usage != null) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        const known = (calls[call.index] ??= { id: '', name: '', arguments: '' });
        if (call.id !== undefined) known.id = call.id;
        known.name += call.function?.name ?? '';
        known.arguments += call.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  return { content, calls, finish, usage };
}

/** An Anthropic stream's events put together, as its SDK does. */
function accumulateAnthropic(events: AnthropicStreamEvent[]): AnthropicMessage {
  let message: AnthropicMessage | undefined;
  const json = new Map<number, string>();
  for (const event of events) {
    if (event.type === 'message_start') message = structuredClone(event.message);
    else if (event.type === 'content_block_start') message!.content[event.index] = structuredClone(event.content_block);
    else if (event.type === 'content_block_delta') {
      const block = message!.content[event.index]!;
      if (event.delta.type === 'text_delta' && block.type === 'text') block.text += event.delta.text;
      if (event.delta.type === 'input_json_delta') json.set(event.index, (json.get(event.index) ?? '') + event.delta.partial_json);
    } else if (event.type === 'content_block_stop') {
      const block = message!.content[event.index]!;
      if (block.type === 'tool_use' && json.has(event.index)) block.input = JSON.parse(json.get(event.index)!) as Record<string, unknown>;
    } else if (event.type === 'message_delta') {
      message!.stop_reason = event.delta.stop_reason;
      message!.usage.output_tokens = event.usage.output_tokens;
    }
  }
  return message!;
}

describe('streams', () => {
  it('Anthropic events become chat chunks that add up to the whole answer’s translation, and back to the same message', () => {
    fc.assert(
      fc.property(anthropicMessage, ({ message, cuts }) => {
        const toChat = new AnthropicToChatStream('mine', 1, true, new UsageMeter({ promptTokens: 0 }));
        const chunks = anthropicEvents(message, cuts).flatMap((event) => toChat.push(event));
        expect(toChat.isDone).toBe(true);
        const whole = anthropicToChatCompletion(message, 'mine', 1);
        const streamed = accumulateChat(chunks);
        expect(streamed.content).toBe(whole.choices[0]!.message.content ?? '');
        expect(streamed.calls).toEqual((whole.choices[0]!.message.tool_calls ?? []).map((call) => ({ id: call.id, ...call.function })));
        expect(streamed.finish).toBe(whole.choices[0]!.finish_reason);
        expect(streamed.usage).toEqual(whole.usage);

        const toAnthropic = new ChatToAnthropicStream(message.id, message.model, message.usage.input_tokens);
        const events = [...chunks.flatMap((chunk) => toAnthropic.push(chunk)), ...toAnthropic.end()];
        expect(accumulateAnthropic(events)).toEqual(message);
      }),
      { numRuns: 300 },
    );
  });

  it('without include_usage no usage chunk is sent, and an error event ends the stream with the upstream’s error', () => {
    const meter = new UsageMeter({ promptTokens: 0 });
    const toChat = new AnthropicToChatStream('mine', 1, false, meter);
    const { message } = fc.sample(anthropicMessage, 1)[0]!;
    const chunks = anthropicEvents(message, [[]]).flatMap((event) => toChat.push(event));
    expect(chunks.every((chunk) => chunk.usage === undefined && chunk.choices.length === 1)).toBe(true);
    // The events' counts still reach the call's meter, which bills them.
    expect(meter.usage()).toEqual(usageOfAnthropic(message.usage));
    expect(() => toChat.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })).toThrow(AnthropicStreamError);
  });
});

describe('errors', () => {
  it('Anthropic’s error types and statuses map both ways', () => {
    for (const status of [400, 401, 402, 403, 404, 413, 429, 500, 504, 529]) {
      const body = anthropicErrorBody(status, 'm');
      expect(body).toMatchObject({ type: 'error', error: { message: 'm' } });
      expect(statusOfAnthropicErrorType(body.error.type)).toBe(status);
    }
    expect([422, 405, 502, 503].map(anthropicErrorType)).toEqual(['invalid_request_error', 'invalid_request_error', 'api_error', 'overloaded_error']);
    expect(statusOfAnthropicErrorType('something_new')).toBe(500);
  });
});
