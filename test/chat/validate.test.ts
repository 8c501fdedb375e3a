import { describe, expect, it } from 'vitest';
import { statusOf } from '../../src/http/error-reply.js';
import { validateChatRequest } from '../../src/chat/validate.js';
import { ValidationError } from '../../src/errors.js';

type Body = Record<string, unknown>;

function minimal(): Body {
  return { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] };
}

function withParams(params: Body): Body {
  return { ...minimal(), ...params };
}

function withMessages(...messages: unknown[]): Body {
  return { model: 'gpt-4o-mini', messages };
}

/** The 422 `errors` map for a body that must be rejected. */
function fieldErrors(body: unknown): Record<string, string[]> {
  try {
    validateChatRequest(body);
  } catch (error) {
    if (error instanceof ValidationError) return error.fields;
    throw error;
  }
  throw new Error('expected a ValidationError, but the body was accepted');
}

function deeplyNestedArray(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };
const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: true,
  },
};

describe('valid requests', () => {
  it('accepts a minimal request and returns the same object', () => {
    const body = minimal();
    expect(validateChatRequest(body)).toBe(body);
  });

  it('accepts a request using every documented parameter', () => {
    const body: Body = {
      model: 'gpt-4o',
      messages: [
        { role: 'developer', content: 'Be brief.', name: 'ops' },
        { role: 'system', content: [{ type: 'text', text: 'You are helpful.' }] },
        {
          role: 'user',
          name: 'ada',
          content: [
            { type: 'text', text: 'What is in this picture, and this sound, and this file?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
            { type: 'file', file: { file_id: 'file-123', filename: 'a.pdf' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [toolCall], refusal: null, audio: null },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
        { role: 'assistant', content: [{ type: 'text', text: 'It is 3°C.' }, { type: 'refusal', refusal: 'No.' }] },
        { role: 'assistant', content: null, function_call: { name: 'legacy', arguments: '{}' } },
        { role: 'function', name: 'legacy', content: null },
        { role: 'user', content: 'Thanks' },
      ],
      audio: { voice: 'alloy', format: 'mp3' },
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      function_call: { name: 'legacy' },
      functions: [{ name: 'legacy', description: 'old style', parameters: { type: 'object' } }],
      logit_bias: { '50256': -100, '1234': 5.5 },
      logprobs: true,
      top_logprobs: 5,
      max_tokens: 256,
      max_completion_tokens: 512,
      metadata: { team: 'search', run: '42' },
      modalities: ['text', 'audio'],
      n: 2,
      parallel_tool_calls: false,
      prediction: { type: 'content', content: 'draft text' },
      prompt_cache_key: 'cache-1',
      reasoning_effort: 'medium',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'weather-report_v1', description: 'A report', schema: { type: 'object' }, strict: true },
      },
      safety_identifier: 'user-hash',
      seed: 42,
      service_tier: 'auto',
      stop: ['\n\n', 'END'],
      store: false,
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.7,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      tools: [weatherTool],
      top_p: 0.9,
      user: 'user-1234',
      verbosity: 'low',
      web_search_options: {
        search_context_size: 'low',
        user_location: { type: 'approximate', approximate: { city: 'Oslo', country: 'NO', timezone: 'Europe/Oslo' } },
      },
    };
    expect(validateChatRequest(body)).toBe(body);
  });

  it('accepts null for every optional parameter OpenAI lets be null', () => {
    const nullable = [
      'audio', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'max_tokens',
      'max_completion_tokens', 'metadata', 'modalities', 'n', 'prediction', 'presence_penalty',
      'prompt_cache_key', 'reasoning_effort', 'safety_identifier', 'seed', 'service_tier', 'stop',
      'store', 'stream', 'stream_options', 'temperature', 'top_p', 'verbosity',
    ];
    const body = withParams(Object.fromEntries(nullable.map((name) => [name, null])));
    expect(validateChatRequest(body)).toBe(body);
  });

  it('keeps unknown fields at every level untouched, for upstreams', () => {
    const vendorOptions = { top_k: 40, nested: { deep: [1, 2, { x: null }] } };
    const body = {
      model: 'llama-3.1-8b',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }], my_tag: 7 }],
      top_k: 40,
      repetition_penalty: 1.1,
      vendor_options: vendorOptions,
      tools: [{ ...weatherTool, x_vendor: true }],
    };
    const result = validateChatRequest(body);
    expect(result).toBe(body);
    expect(result).toEqual({
      model: 'llama-3.1-8b',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }], my_tag: 7 }],
      top_k: 40,
      repetition_penalty: 1.1,
      vendor_options: { top_k: 40, nested: { deep: [1, 2, { x: null }] } },
      tools: [{ ...weatherTool, x_vendor: true }],
    });
    expect(result.vendor_options).toBe(vendorOptions);
  });

  it('gives an assistant message without content but with tool_calls content: null', () => {
    const result = validateChatRequest(withMessages({ role: 'user', content: 'Weather?' }, { role: 'assistant', tool_calls: [toolCall] }));
    expect(result.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [toolCall] });
  });
});

describe('the body itself', () => {
  it.each([
    ['an array', [minimal()]],
    ['a string', 'hello'],
    ['null', null],
    ['a number', 42],
    ['a boolean', true],
    ['undefined', undefined],
  ])('a body that is %s gets a 422 keyed "body"', (_kind, body) => {
    let caught: unknown;
    try {
      validateChatRequest(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    const error = caught as ValidationError;
    expect(statusOf(error)).toBe(422);
    expect(error.fields).toEqual({ body: ['must be a JSON object'] });
  });

  it('an empty object lacks both required fields', () => {
    expect(fieldErrors({})).toEqual({
      model: ['The model field is required.'],
      messages: ['The messages field is required.'],
    });
  });
});

describe('model', () => {
  it.each([
    [{ messages: minimal().messages }, 'The model field is required.'],
    [withParams({ model: '' }), 'must not be empty'],
    [withParams({ model: 42 }), 'must be a string'],
    [withParams({ model: null }), 'must be a string'],
    [withParams({ model: ['gpt-4o'] }), 'must be a string'],
  ])('%j is rejected on model', (body, message) => {
    expect(fieldErrors(body)).toEqual({ model: [message] });
  });

  it('accepts any non-empty name, unicode included', () => {
    expect(validateChatRequest(withParams({ model: 'モデル-🚀' })).model).toBe('モデル-🚀');
  });
});

describe('messages', () => {
  it.each([
    [{ model: 'm' }, { messages: ['The messages field is required.'] }],
    [withParams({ messages: [] }), { messages: ['must not be empty'] }],
    [withParams({ messages: 'Hello' }), { messages: ['must be an array'] }],
    [withParams({ messages: { role: 'user', content: 'Hello' } }), { messages: ['must be an array'] }],
    [withParams({ messages: null }), { messages: ['must be an array'] }],
    [withMessages('Hello'), { 'messages.0': ['must be an object'] }],
    [withMessages(null), { 'messages.0': ['must be an object'] }],
    [withMessages([{ role: 'user', content: 'x' }]), { 'messages.0': ['must be an object'] }],
    [withMessages({ content: 'Hello' }), { 'messages.0.role': ['The role field is required.'] }],
  ])('%j is rejected', (body, expected) => {
    expect(fieldErrors(body)).toEqual(expected);
  });

  it.each(['wizard', 'User', '', 7, null, ['user'], '__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'role %j gets one error listing the allowed roles',
    (role) => {
      expect(fieldErrors(withMessages({ role, content: 'Hello' }))).toEqual({
        'messages.0.role': ['must be one of: system, developer, user, assistant, tool, function'],
      });
    },
  );

  describe('fields of another role', () => {
    // Read as what they say (tool calls are counted and billed), so never let through on a
    // message that cannot carry them.
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
    it.each([
      ['system', 'tool_calls', [call]],
      ['developer', 'tool_calls', [call]],
      ['user', 'tool_calls', [call]],
      ['user', 'tool_calls', [null]],
      ['user', 'tool_calls', 'x'],
      ['tool', 'tool_calls', [call]],
      ['function', 'tool_calls', null],
      ['user', 'function_call', { name: 'f', arguments: '{}' }],
      ['tool', 'function_call', null],
    ])('%s with %s = %j is refused', (role, field, value) => {
      const message = { role, content: 'x', tool_call_id: role === 'tool' ? 'c1' : undefined, name: role === 'function' ? 'f' : undefined, [field]: value };
      expect(fieldErrors(withMessages(message))).toEqual({ [`messages.0.${field}`]: ['is only allowed on assistant messages'] });
    });

    it.each(['system', 'developer', 'user', 'assistant'])('%s with tool_call_id is refused', (role) => {
      expect(fieldErrors(withMessages({ role, content: 'x', tool_call_id: 'c1' }))).toEqual({
        'messages.0.tool_call_id': ['is only allowed on tool messages'],
      });
    });

    it('an assistant message with null in its tool calls gets an error for that item', () => {
      expect(fieldErrors(withMessages({ role: 'assistant', tool_calls: [null] }))).toEqual({
        'messages.0.tool_calls.0': ['must be an object'],
      });
    });

    it('an assistant message may carry at most 128 tool calls', () => {
      const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } };
      const body = withMessages({ role: 'assistant', tool_calls: new Array(128).fill(call) });
      expect(validateChatRequest(body)).toBe(body);
      expect(fieldErrors(withMessages({ role: 'assistant', tool_calls: new Array(129).fill(call) }))).toEqual({
        'messages.0.tool_calls': ['must have at most 128 items'],
      });
    });
  });

  describe('system, developer and user', () => {
    it.each(['system', 'developer', 'user'])('%s needs content', (role) => {
      expect(fieldErrors(withMessages({ role }))).toEqual({ 'messages.0.content': ['The content field is required.'] });
      expect(fieldErrors(withMessages({ role, content: null }))).toEqual({
        'messages.0.content': ['must be a string or an array of content parts'],
      });
    });

    it.each(['system', 'developer', 'user'])('%s accepts an empty string and a name', (role) => {
      expect(() => validateChatRequest(withMessages({ role, content: '', name: 'x' }))).not.toThrow();
    });

    it.each(['system', 'developer'])('%s takes text parts only', (role) => {
      expect(
        fieldErrors(withMessages({ role, content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] })),
      ).toEqual({ 'messages.0.content.0.type': ['must be one of: text'] });
    });

    it('a name must be a string', () => {
      expect(fieldErrors(withMessages({ role: 'user', content: 'hi', name: 5 }))).toEqual({
        'messages.0.name': ['must be a string'],
      });
    });
  });

  describe('assistant', () => {
    it('may leave content out or null when it carries tool_calls or function_call', () => {
      const body = withMessages(
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'assistant', function_call: { name: 'f', arguments: '{}' } },
      );
      expect(validateChatRequest(body)).toBe(body);
    });

    it('needs content when it carries neither', () => {
      const message = 'The content field is required unless tool_calls or function_call is given.';
      expect(fieldErrors(withMessages({ role: 'assistant' }))).toEqual({ 'messages.0.content': [message] });
      expect(fieldErrors(withMessages({ role: 'assistant', content: null }))).toEqual({ 'messages.0.content': [message] });
    });

    it('takes text and refusal parts, but not images', () => {
      const ok = withMessages({
        role: 'assistant',
        content: [{ type: 'text', text: 'a' }, { type: 'refusal', refusal: 'b' }],
      });
      expect(validateChatRequest(ok)).toBe(ok);
      expect(
        fieldErrors(withMessages({ role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'u' } }] })),
      ).toEqual({ 'messages.0.content.0.type': ['must be one of: text, refusal'] });
    });

    it('rejects content of the wrong type with one message', () => {
      expect(fieldErrors(withMessages({ role: 'assistant', content: 5 }))).toEqual({
        'messages.0.content': ['must be a string, an array of content parts or null'],
      });
    });

    it('checks each tool call', () => {
      expect(
        fieldErrors(
          withMessages({
            role: 'assistant',
            tool_calls: [
              { id: 'a', type: 'function', function: { name: 'f' } },
              { type: 'custom', function: { name: 'f', arguments: {} } },
            ],
          }),
        ),
      ).toEqual({
        'messages.0.tool_calls.0.function.arguments': ['The arguments field is required.'],
        'messages.0.tool_calls.1.id': ['The id field is required.'],
        'messages.0.tool_calls.1.type': ['must be "function"'],
        'messages.0.tool_calls.1.function.arguments': ['must be a string'],
      });
    });

    it('rejects an empty tool_calls list, which does not count as carrying tool calls', () => {
      expect(fieldErrors(withMessages({ role: 'assistant', tool_calls: [] }))).toEqual({
        'messages.0.tool_calls': ['must not be empty'],
      });
    });
  });

  describe('tool', () => {
    it('needs tool_call_id and content', () => {
      expect(fieldErrors(withMessages({ role: 'tool' }))).toEqual({
        'messages.0.content': ['The content field is required.'],
        'messages.0.tool_call_id': ['The tool_call_id field is required.'],
      });
    });

    it('takes a string or text parts', () => {
      const body = withMessages(
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'rain' }] },
      );
      expect(validateChatRequest(body)).toBe(body);
      expect(fieldErrors(withMessages({ role: 'tool', tool_call_id: 7, content: 'x' }))).toEqual({
        'messages.0.tool_call_id': ['must be a string'],
      });
    });
  });

  describe('function (legacy)', () => {
    it('needs a name and a content that may be null', () => {
      expect(validateChatRequest(withMessages({ role: 'function', name: 'f', content: null }))).toBeDefined();
      expect(fieldErrors(withMessages({ role: 'function', content: 'x' }))).toEqual({
        'messages.0.name': ['The name field is required.'],
      });
      expect(fieldErrors(withMessages({ role: 'function', name: 'f', content: 5 }))).toEqual({
        'messages.0.content': ['must be a string or null'],
      });
    });
  });

  describe('content parts', () => {
    it.each([
      [5, { 'messages.0.content': ['must be a string or an array of content parts'] }],
      [{ type: 'text', text: 'hi' }, { 'messages.0.content': ['must be a string or an array of content parts'] }],
      [[], { 'messages.0.content': ['must not be empty'] }],
      [['hi'], { 'messages.0.content.0': ['must be an object'] }],
      [[{ text: 'hi' }], { 'messages.0.content.0.type': ['The type field is required.'] }],
      [[{ type: 5 }], { 'messages.0.content.0.type': ['must be a string'] }],
      [[{ type: 'video' }], { 'messages.0.content.0.type': ['must be one of: text, image_url, input_audio, file'] }],
      [[{ type: 'text' }], { 'messages.0.content.0.text': ['The text field is required.'] }],
      [[{ type: 'text', text: null }], { 'messages.0.content.0.text': ['must be a string'] }],
      [[{ type: 'image_url' }], { 'messages.0.content.0.image_url': ['The image_url field is required.'] }],
      [[{ type: 'image_url', image_url: 'https://x' }], { 'messages.0.content.0.image_url': ['must be an object'] }],
      [[{ type: 'image_url', image_url: {} }], { 'messages.0.content.0.image_url.url': ['The url field is required.'] }],
      [
        [{ type: 'image_url', image_url: { url: 'u', detail: 'ultra' } }],
        { 'messages.0.content.0.image_url.detail': ['must be one of: auto, low, high'] },
      ],
      [
        [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'ogg' } }],
        { 'messages.0.content.0.input_audio.format': ['must be one of: wav, mp3'] },
      ],
      [[{ type: 'file', file: { file_id: 7 } }], { 'messages.0.content.0.file.file_id': ['must be a string'] }],
      [
        [{ type: 'refusal', refusal: 'no' }],
        { 'messages.0.content.0.type': ['must be one of: text, image_url, input_audio, file'] },
      ],
    ])('user content %j is rejected', (content, expected) => {
      expect(fieldErrors(withMessages({ role: 'user', content }))).toEqual(expected);
    });

    it('reports each bad part of one message under its own index', () => {
      expect(
        fieldErrors(
          withMessages({
            role: 'user',
            content: [{ type: 'text', text: 'ok' }, { type: 'text', text: 1 }, { type: 'image_url', image_url: {} }],
          }),
        ),
      ).toEqual({
        'messages.0.content.1.text': ['must be a string'],
        'messages.0.content.2.image_url.url': ['The url field is required.'],
      });
    });
  });

  it('reports bad messages under their own index and keeps the good ones quiet', () => {
    expect(
      fieldErrors(
        withMessages(
          { role: 'system', content: 'ok' },
          { role: 'user' },
          { role: 'assistant', content: 'ok' },
          { role: 'robot', content: 'x' },
          { role: 'tool', content: 'x' },
        ),
      ),
    ).toEqual({
      'messages.1.content': ['The content field is required.'],
      'messages.3.role': ['must be one of: system, developer, user, assistant, tool, function'],
      'messages.4.tool_call_id': ['The tool_call_id field is required.'],
    });
  });
});

describe('numeric and scalar parameters at their boundaries', () => {
  const cases: Array<[string, unknown[], Array<[unknown, string]>]> = [
    ['temperature', [0, 1, 2, null], [[-0.01, 'must be >= 0'], [2.01, 'must be <= 2'], ['1', 'must be a number or null']]],
    ['top_p', [0, 0.5, 1, null], [[-0.01, 'must be >= 0'], [1.01, 'must be <= 1'], [true, 'must be a number or null']]],
    ['frequency_penalty', [-2, 0, 2, null], [[-2.01, 'must be >= -2'], [2.01, 'must be <= 2'], ['0', 'must be a number or null']]],
    ['presence_penalty', [-2, 0, 2, null], [[-2.01, 'must be >= -2'], [2.01, 'must be <= 2'], [[], 'must be a number or null']]],
    ['n', [1, 128, null], [[0, 'must be >= 1'], [129, 'must be <= 128'], [1.5, 'must be an integer'], ['2', 'must be an integer or null']]],
    ['max_tokens', [1, 100_000, null], [[0, 'must be >= 1'], [-5, 'must be >= 1'], [10.5, 'must be an integer']]],
    ['max_completion_tokens', [1, 100_000, null], [[0, 'must be >= 1'], [1.5, 'must be an integer'], ['9', 'must be an integer or null']]],
    ['seed', [0, -1, Number.MAX_SAFE_INTEGER, null], [[0.5, 'must be an integer'], ['42', 'must be an integer or null']]],
    ['logprobs', [true, false, null], [['true', 'must be a boolean or null'], [1, 'must be a boolean or null']]],
    ['store', [true, false, null], [['no', 'must be a boolean or null']]],
    ['stream', [false, null], [[1, 'must be a boolean or null']]],
    ['parallel_tool_calls', [true, false], [[null, 'must be a boolean'], ['yes', 'must be a boolean']]],
    ['user', ['user-1', ''], [[null, 'must be a string'], [42, 'must be a string']]],
    ['prompt_cache_key', ['k', null], [[1, 'must be a string or null']]],
    ['safety_identifier', ['x'.repeat(64), null], [['x'.repeat(65), 'must be at most 64 characters long']]],
    [
      'reasoning_effort',
      ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', null],
      [
        ['extreme', 'must be one of: none, minimal, low, medium, high, xhigh, max'],
        [3, 'must be one of: none, minimal, low, medium, high, xhigh, max or null'],
      ],
    ],
    [
      'service_tier',
      ['auto', 'default', 'flex', 'scale', 'priority', null],
      [['fast', 'must be one of: auto, default, flex, scale, priority']],
    ],
    ['verbosity', ['low', 'medium', 'high', null], [['loud', 'must be one of: low, medium, high']]],
  ];

  describe.each(cases)('%s', (field, inside, outside) => {
    it.each(inside)('accepts %j', (value) => {
      const body = withParams({ [field]: value });
      expect(validateChatRequest(body)[field]).toBe(value);
    });

    it.each(outside)('rejects %j', (value, message) => {
      expect(fieldErrors(withParams({ [field]: value }))).toEqual({ [field]: [message] });
    });
  });

  describe('top_logprobs (with logprobs: true)', () => {
    it.each([0, 20])('accepts %j', (value) => {
      expect(() => validateChatRequest(withParams({ logprobs: true, top_logprobs: value }))).not.toThrow();
    });

    it.each([
      [-1, 'must be >= 0'],
      [21, 'must be <= 20'],
      [2.5, 'must be an integer'],
    ])('rejects %j', (value, message) => {
      expect(fieldErrors(withParams({ logprobs: true, top_logprobs: value }))).toEqual({ top_logprobs: [message] });
    });

    it('is only allowed when logprobs is true', () => {
      expect(fieldErrors(withParams({ top_logprobs: 2 }))).toEqual({ top_logprobs: ['is only allowed when logprobs is true'] });
      expect(fieldErrors(withParams({ logprobs: false, top_logprobs: 2 }))).toEqual({
        top_logprobs: ['is only allowed when logprobs is true'],
      });
    });
  });
});

describe('stop', () => {
  it.each(['END', '', ['a'], ['a', 'b', 'c', 'd'], [], null])('accepts %j', (stop) => {
    expect(() => validateChatRequest(withParams({ stop }))).not.toThrow();
  });

  it.each([
    [['a', 'b', 'c', 'd', 'e'], { stop: ['must have at most 4 items'] }],
    [['a', 1], { 'stop.1': ['must be a string'] }],
    [5, { stop: ['must be a string, an array of up to 4 strings or null'] }],
    [{ seq: 'x' }, { stop: ['must be a string, an array of up to 4 strings or null'] }],
  ])('rejects %j', (stop, expected) => {
    expect(fieldErrors(withParams({ stop }))).toEqual(expected);
  });
});

describe('logit_bias', () => {
  it('accepts token ids mapped to -100..100', () => {
    expect(() => validateChatRequest(withParams({ logit_bias: { '0': -100, '50256': 100, '7': 0.5 } }))).not.toThrow();
  });

  it.each([
    [{ '1': 100.01 }, { 'logit_bias.1': ['must be <= 100'] }],
    [{ '1': -100.01 }, { 'logit_bias.1': ['must be >= -100'] }],
    [{ '1': '5' }, { 'logit_bias.1': ['must be a number'] }],
    [{ hello: 5 }, { logit_bias: ['has an invalid key "hello": keys must be token ids (strings of digits)'] }],
    [{ '-1': 5 }, { logit_bias: ['has an invalid key "-1": keys must be token ids (strings of digits)'] }],
    [[1, 2], { logit_bias: ['must be an object or null'] }],
  ])('rejects %j', (logitBias, expected) => {
    expect(fieldErrors(withParams({ logit_bias: logitBias }))).toEqual(expected);
  });

  it('reports at most three messages for one field', () => {
    const logitBias = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((key) => [key, 1]));
    expect(fieldErrors(withParams({ logit_bias: logitBias }))).toEqual({
      logit_bias: [
        'has an invalid key "a": keys must be token ids (strings of digits)',
        'has an invalid key "b": keys must be token ids (strings of digits)',
        'has an invalid key "c": keys must be token ids (strings of digits)',
      ],
    });
  });
});

describe('metadata', () => {
  const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`key${i}`, 'v']));

  it('accepts 16 pairs with keys up to 64 and values up to 512 characters', () => {
    expect(() => validateChatRequest(withParams({ metadata: sixteen }))).not.toThrow();
    expect(() => validateChatRequest(withParams({ metadata: { ['k'.repeat(64)]: 'v'.repeat(512) } }))).not.toThrow();
  });

  it.each([
    [{ ...sixteen, key16: 'v' }, { metadata: ['must have at most 16 entries'] }],
    [{ k: 'v'.repeat(513) }, { 'metadata.k': ['must be at most 512 characters long'] }],
    [{ k: 5 }, { 'metadata.k': ['must be a string'] }],
    [
      { ['k'.repeat(65)]: 'v' },
      { metadata: [`has an invalid key "${'k'.repeat(40)}…": keys must be at most 64 characters long`] },
    ],
    ['tag', { metadata: ['must be an object or null'] }],
  ])('rejects %j', (metadata, expected) => {
    expect(fieldErrors(withParams({ metadata }))).toEqual(expected);
  });
});

describe('modalities, audio, prediction and web_search_options', () => {
  it.each([
    [{ modalities: ['video'] }, { 'modalities.0': ['must be one of: text, audio'] }],
    [{ modalities: 'text' }, { modalities: ['must be an array or null'] }],
    [{ audio: { voice: 'alloy' } }, { 'audio.format': ['The format field is required.'] }],
    [{ audio: { voice: 'alloy', format: 'ogg' } }, { 'audio.format': ['must be one of: wav, aac, mp3, flac, opus, pcm16'] }],
    [{ audio: { voice: 5, format: 'wav' } }, { 'audio.voice': ['must be a voice name or an object with an id'] }],
    [{ prediction: { type: 'content' } }, { 'prediction.content': ['The content field is required.'] }],
    [{ prediction: { type: 'diff', content: 'x' } }, { 'prediction.type': ['must be "content"'] }],
    [{ web_search_options: { search_context_size: 'huge' } }, { 'web_search_options.search_context_size': ['must be one of: low, medium, high'] }],
    [
      { web_search_options: { user_location: { type: 'exact', approximate: {} } } },
      { 'web_search_options.user_location.type': ['must be "approximate"'] },
    ],
  ])('rejects %j', (params, expected) => {
    expect(fieldErrors(withParams(params))).toEqual(expected);
  });

  it('accepts a custom voice given by id', () => {
    expect(() => validateChatRequest(withParams({ audio: { voice: { id: 'voice_1' }, format: 'wav' } }))).not.toThrow();
  });
});

describe('response_format', () => {
  it.each([{ type: 'text' }, { type: 'json_object' }, { type: 'json_schema', json_schema: { name: 'x' } }])(
    'accepts %j',
    (responseFormat) => {
      expect(() => validateChatRequest(withParams({ response_format: responseFormat }))).not.toThrow();
    },
  );

  it.each([
    [{}, { 'response_format.type': ['The type field is required.'] }],
    [{ type: 'xml' }, { 'response_format.type': ['must be one of: text, json_object, json_schema'] }],
    [{ type: 'json_schema' }, { 'response_format.json_schema': ['The json_schema field is required.'] }],
    [{ type: 'json_schema', json_schema: {} }, { 'response_format.json_schema.name': ['The name field is required.'] }],
    [
      { type: 'json_schema', json_schema: { name: 'has space' } },
      { 'response_format.json_schema.name': ['must be 1 to 64 letters, digits, underscores or dashes'] },
    ],
    [
      { type: 'json_schema', json_schema: { name: 'x', schema: 'object', strict: 'yes' } },
      {
        'response_format.json_schema.schema': ['must be an object'],
        'response_format.json_schema.strict': ['must be a boolean or null'],
      },
    ],
    ['json', { response_format: ['must be an object'] }],
    [null, { response_format: ['must be an object'] }],
  ])('rejects %j', (responseFormat, expected) => {
    expect(fieldErrors(withParams({ response_format: responseFormat }))).toEqual(expected);
  });
});

describe('tools and tool_choice', () => {
  const tool = (name: unknown) => ({ type: 'function', function: { name } });

  it('accepts function tools with names of 1 to 64 allowed characters', () => {
    const body = withParams({ tools: [weatherTool, tool('a'), tool('A-z_0-9'), tool('x'.repeat(64))] });
    expect(validateChatRequest(body)).toBe(body);
  });

  it('accepts 128 tools and rejects 129', () => {
    const tools = Array.from({ length: 129 }, (_, i) => tool(`t${i}`));
    expect(() => validateChatRequest(withParams({ tools: tools.slice(0, 128) }))).not.toThrow();
    expect(fieldErrors(withParams({ tools }))).toEqual({ tools: ['must have at most 128 items'] });
  });

  it.each([
    [[], { tools: ['must not be empty'] }],
    [null, { tools: ['must be an array'] }],
    [{ type: 'function' }, { tools: ['must be an array'] }],
    [[tool('')], { 'tools.0.function.name': ['must be 1 to 64 letters, digits, underscores or dashes'] }],
    [[tool('x'.repeat(65))], { 'tools.0.function.name': ['must be 1 to 64 letters, digits, underscores or dashes'] }],
    [[tool('get weather')], { 'tools.0.function.name': ['must be 1 to 64 letters, digits, underscores or dashes'] }],
    [[tool('naïve')], { 'tools.0.function.name': ['must be 1 to 64 letters, digits, underscores or dashes'] }],
    [[tool(42)], { 'tools.0.function.name': ['must be a string'] }],
    [[{ type: 'function', function: {} }], { 'tools.0.function.name': ['The name field is required.'] }],
    [[{ type: 'function' }], { 'tools.0.function': ['The function field is required.'] }],
    [[{ type: 'retrieval', function: { name: 'f' } }], { 'tools.0.type': ['must be "function"'] }],
    [['get_weather'], { 'tools.0': ['must be an object'] }],
    [
      [{ type: 'function', function: { name: 'f', parameters: 'none', description: 5, strict: 'no' } }],
      {
        'tools.0.function.description': ['must be a string'],
        'tools.0.function.parameters': ['must be an object'],
        'tools.0.function.strict': ['must be a boolean or null'],
      },
    ],
  ])('tools %j is rejected', (tools, expected) => {
    expect(fieldErrors(withParams({ tools }))).toEqual(expected);
  });

  it.each(['none', 'auto', 'required', { type: 'function', function: { name: 'get_weather' } }])(
    'tool_choice %j is accepted',
    (toolChoice) => {
      expect(() => validateChatRequest(withParams({ tools: [weatherTool], tool_choice: toolChoice }))).not.toThrow();
    },
  );

  it.each([
    ['any', { tool_choice: ['must be one of: none, auto, required'] }],
    [5, { tool_choice: ['must be "none", "auto", "required" or an object naming a function'] }],
    [null, { tool_choice: ['must be "none", "auto", "required" or an object naming a function'] }],
    [{ type: 'function' }, { 'tool_choice.function': ['The function field is required.'] }],
    [{ type: 'function', function: {} }, { 'tool_choice.function.name': ['The name field is required.'] }],
    [{ type: 'tool', function: { name: 'f' } }, { 'tool_choice.type': ['must be "function"'] }],
  ])('tool_choice %j is rejected', (toolChoice, expected) => {
    expect(fieldErrors(withParams({ tools: [weatherTool], tool_choice: toolChoice }))).toEqual(expected);
  });

  it('checks the legacy functions and function_call', () => {
    expect(() =>
      validateChatRequest(withParams({ functions: [{ name: 'f' }], function_call: 'auto' })),
    ).not.toThrow();
    expect(fieldErrors(withParams({ functions: [], function_call: 'required' }))).toEqual({
      function_call: ['must be one of: none, auto'],
      functions: ['must not be empty'],
    });
    expect(fieldErrors(withParams({ functions: [{ name: 'a.b' }], function_call: 1 }))).toEqual({
      function_call: ['must be "none", "auto" or an object naming a function'],
      'functions.0.name': ['must be 1 to 64 letters, digits, underscores or dashes'],
    });
  });
});

describe('stream_options', () => {
  it('is accepted with stream: true', () => {
    expect(() => validateChatRequest(withParams({ stream: true, stream_options: { include_usage: true } }))).not.toThrow();
    expect(() => validateChatRequest(withParams({ stream: true, stream_options: {} }))).not.toThrow();
  });

  it.each([{}, { stream: false }, { stream: null }])('is rejected without stream: true (%j)', (params) => {
    expect(fieldErrors(withParams({ ...params, stream_options: { include_usage: true } }))).toEqual({
      stream_options: ['is only allowed when stream is true'],
    });
  });

  it('may be null without stream', () => {
    expect(() => validateChatRequest(withParams({ stream_options: null }))).not.toThrow();
  });

  it('checks its own fields', () => {
    expect(fieldErrors(withParams({ stream: true, stream_options: { include_usage: 'yes' } }))).toEqual({
      'stream_options.include_usage': ['must be a boolean'],
    });
    expect(fieldErrors(withParams({ stream: true, stream_options: true }))).toEqual({
      stream_options: ['must be an object or null'],
    });
  });
});

describe('several invalid fields at once', () => {
  it('gives exactly one entry per invalid field', () => {
    expect(
      fieldErrors({
        model: '',
        messages: [{ role: 'user', content: 'ok' }, { role: 'assistant' }, { role: 'user', content: [{ type: 'text' }] }],
        temperature: 2.5,
        top_p: -1,
        n: 0,
        max_tokens: 'many',
        stop: ['a', 'b', 'c', 'd', 'e'],
        stream_options: { include_usage: true },
        tools: [{ type: 'function', function: { name: 'bad name!' } }],
        tool_choice: 'sometimes',
        response_format: { type: 'yaml' },
        extra_field: { allowed: true },
      }),
    ).toEqual({
      model: ['must not be empty'],
      max_tokens: ['must be an integer or null'],
      n: ['must be >= 1'],
      'response_format.type': ['must be one of: text, json_object, json_schema'],
      stop: ['must have at most 4 items'],
      temperature: ['must be <= 2'],
      tool_choice: ['must be one of: none, auto, required'],
      'tools.0.function.name': ['must be 1 to 64 letters, digits, underscores or dashes'],
      top_p: ['must be >= 0'],
      stream_options: ['is only allowed when stream is true'],
      'messages.1.content': ['The content field is required unless tool_calls or function_call is given.'],
      'messages.2.content.0.text': ['The text field is required.'],
    });
  });

  it('reports at most 50 fields, however broken the request', () => {
    const messages = Array.from({ length: 10_000 }, () => ({ role: 'user' }));
    const fields = fieldErrors(withParams({ messages }));
    const keys = Object.keys(fields);
    expect(keys).toHaveLength(50);
    expect(keys[0]).toBe('messages.0.content');
    expect(keys[49]).toBe('messages.49.content');
  });
});

describe('hostile input', () => {
  // Generous bounds: they catch per-item work that blows up to seconds (an error object
  // for every bad item of a million-item array), not small slowdowns; npm run bench
  // measures speed.
  const QUICK_MS = 1000;

  function timed<T>(run: () => T): { result: T; ms: number } {
    const start = performance.now();
    const result = run();
    return { result, ms: performance.now() - start };
  }

  it('ignores 10,000-level nesting in fields it does not check', () => {
    const deep = deeplyNestedArray(10_000);
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi', extra: deep }],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: deep } } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'n', schema: { deep } } },
      vendor: deep,
    };
    const { result, ms } = timed(() => validateChatRequest(body));
    expect(result).toBe(body);
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('rejects 10,000-level nesting where a scalar or part belongs, with one message', () => {
    const deep = deeplyNestedArray(10_000);
    const { result, ms } = timed(() =>
      fieldErrors({
        model: deep,
        messages: [{ role: 'user', content: deep }],
        logit_bias: { '1': deep },
        stop: deep,
        temperature: deep,
      }),
    );
    expect(result).toEqual({
      model: ['must be a string'],
      'logit_bias.1': ['must be a number'],
      'stop.0': ['must be a string'],
      temperature: ['must be a number or null'],
      'messages.0.content.0': ['must be an object'],
    });
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('parses and checks deeply nested JSON objects without overflowing the stack', () => {
    const text = `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
    const body: unknown = JSON.parse(text);
    expect(validateChatRequest(body)).toBe(body);
  });

  it('reports a million-item array of garbage as one error per field', () => {
    const garbage = new Array<number>(1_000_000).fill(0);
    const { result, ms } = timed(() =>
      fieldErrors(
        withParams({
          stop: garbage,
          modalities: garbage,
          tools: garbage,
          functions: garbage,
          messages: [
            { role: 'user', content: garbage },
            { role: 'assistant', tool_calls: garbage },
          ],
        }),
      ),
    );
    expect(result).toEqual({
      functions: ['must have at most 128 items'],
      modalities: ['contains an invalid modality'],
      stop: ['must have at most 4 items'],
      tools: ['must have at most 128 items'],
      'messages.0.content': ['contains an invalid content part'],
      'messages.1.tool_calls': ['must have at most 128 items'],
    });
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('still accepts a long list when every item is valid', () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', text: `part ${i}` }));
    const body = withMessages({ role: 'user', content: parts });
    expect(validateChatRequest(body)).toBe(body);
  });

  it('reports one bad item in a long list without listing every item', () => {
    const parts = Array.from({ length: 10_000 }, (_, i) => ({ type: 'text', text: `part ${i}` }));
    parts[9_999] = { type: 'text', text: 5 as unknown as string };
    expect(fieldErrors(withMessages({ role: 'user', content: parts }))).toEqual({
      'messages.0.content': ['contains an invalid content part'],
    });
  });

  it('handles a logit_bias with 100,000 bad keys with one error: the cap, no key looked at', () => {
    const logitBias = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`token${i}`, 1]));
    const { result, ms } = timed(() => fieldErrors(withParams({ logit_bias: logitBias })));
    expect(result).toEqual({ logit_bias: ['must have at most 300 entries'] });
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('reports bad keys of a logit_bias within the cap as one error', () => {
    const logitBias = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`token${i}`, 1]));
    expect(fieldErrors(withParams({ logit_bias: logitBias }))).toEqual({
      logit_bias: ['contains an invalid entry (keys must be token ids (strings of digits))'],
    });
  });

  it('stops at 50 fields on a long array of bad messages', () => {
    const messages = new Array<unknown>(10_000).fill({ role: 'user', content: [0, 0, 0] });
    const { result, ms } = timed(() => fieldErrors(withParams({ messages })));
    expect(Object.keys(result)).toHaveLength(50);
    expect(result['messages.0.content.0']).toEqual(['must be an object']);
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('refuses more than 10,000 messages with one error, looking at none of them', () => {
    const messages = new Array<unknown>(1_000_000).fill({ role: 'user', content: [0, 0, 0] });
    const { result, ms } = timed(() => fieldErrors(withParams({ messages })));
    expect(result).toEqual({ messages: ['must have at most 10000 items'] });
    expect(ms).toBeLessThan(QUICK_MS);
  });

  it('treats prototype keys as plain data and pollutes nothing', () => {
    const body: unknown = JSON.parse(
      '{"model":"m","messages":[{"role":"user","content":"hi","__proto__":{"role":"x"}}],' +
        '"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},' +
        '"metadata":{"__proto__":"x","constructor":"y","toString":"z"}}',
    );
    const result = validateChatRequest(body);
    expect(result).toBe(body);
    expect(Object.hasOwn(result, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });

  it('rejects prototype keys where a key has a format, and keeps them as keys in the report', () => {
    const body: unknown = JSON.parse(
      '{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"__proto__":1},' +
        '"metadata":{"__proto__":5}}',
    );
    const fields = fieldErrors(body);
    expect(fields).toEqual({
      logit_bias: ['has an invalid key "__proto__": keys must be token ids (strings of digits)'],
      'metadata.__proto__': ['must be a string'],
    });
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
  });

  it('accepts any unicode in free text', () => {
    const text = 'Zalgo z̷̢̛a̶l̷g̴o, emoji 👩‍👩‍👧, RTL مرحبا, NUL \u0000, lone surrogate \ud800, BOM \ufeff';
    const body = withMessages({ role: 'user', content: text, name: 'ユーザー' });
    expect(validateChatRequest(body)).toBe(body);
  });
});
