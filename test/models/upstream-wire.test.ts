import { describe, expect, it } from 'vitest';
import {
  isRecord,
  ModelRenamer,
  plainCompletion,
  textFinishReason,
  textIndexIsZero,
  textUsage,
  textWithUsageCost,
  upstreamErrorOf,
  upstreamRequestText,
} from '../../src/models/upstream/wire.js';
import { usageOfChat as usageOf } from '../../src/models/upstream/usage-readers.js';

function rename(text: string): string {
  return new ModelRenamer('lmgate-model').rename(text, JSON.parse(text) as Record<string, unknown>);
}

describe('ModelRenamer', () => {
  it('replaces the top-level model in place, leaving every other byte as the upstream wrote it', () => {
    const text = '{"id":"c1","model":"up/llama-3","choices":[{"delta":{"content":"hi"}}],"x":1.50}';
    expect(rename(text)).toBe('{"id":"c1","model":"lmgate-model","choices":[{"delta":{"content":"hi"}}],"x":1.50}');
  });

  it('does not touch text that only looks like the key (quotes inside strings are escaped)', () => {
    const text = JSON.stringify({ model: 'm', choices: [{ delta: { content: 'say "model":"m" please' } }] });
    const renamed = JSON.parse(rename(text)) as { model: string; choices: { delta: { content: string } }[] };
    expect(renamed.model).toBe('lmgate-model');
    expect(renamed.choices[0]!.delta.content).toBe('say "model":"m" please');
  });

  it('serializes instead when the key appears twice, is spaced, or is missing', () => {
    for (const text of [
      '{"model":"m","choices":[{"tool":{"model":"m"}}]}',
      '{"model": "m", "choices": []}',
      '{"choices":[]}',
    ]) {
      const renamed = JSON.parse(rename(text)) as Record<string, unknown>;
      expect(renamed.model).toBe('lmgate-model');
      expect(renamed.choices).toEqual((JSON.parse(text) as Record<string, unknown>).choices);
    }
  });

  it('model names that need escaping', () => {
    const text = JSON.stringify({ model: 'a"b\\c', choices: [] });
    expect(JSON.parse(new ModelRenamer('x"y').rename(text, JSON.parse(text) as Record<string, unknown>))).toEqual({ model: 'x"y', choices: [] });
  });
});

describe('upstreamErrorOf', () => {
  it("reads OpenAI's, llama.cpp's and FastAPI's error shapes", () => {
    expect(upstreamErrorOf('{"error":{"message":"too long"}}')).toEqual({ message: 'too long', fields: {} });
    expect(upstreamErrorOf('{"error":"bad"}')).toEqual({ message: 'bad', fields: {} });
    expect(upstreamErrorOf('{"detail":"nope"}')).toEqual({ message: 'nope', fields: {} });
    expect(upstreamErrorOf('<html>502</html>')).toBeUndefined();
  });

  it("keeps the error's plain fields: type, param, code and numbers, but nothing nested", () => {
    const llama = '{"error":{"code":400,"message":"request exceeds the context","type":"exceed_context_size_error","n_prompt_tokens":4100,"n_ctx":2048,"x":{"deep":1}}}';
    expect(upstreamErrorOf(llama)).toEqual({
      message: 'request exceeds the context',
      fields: { code: 400, type: 'exceed_context_size_error', n_prompt_tokens: 4100, n_ctx: 2048 },
    });
    const openai = '{"error":{"message":"bad value","type":"invalid_request_error","param":"temperature","code":null}}';
    expect(upstreamErrorOf(openai)).toEqual({ message: 'bad value', fields: { type: 'invalid_request_error', param: 'temperature' } });
  });
});

describe('upstreamRequestText', () => {
  it('renames the model in place and leaves every other byte alone', () => {
    const text = '{"messages":[{"role":"user","content":"hi"}], "model":"gate-m","temperature":1.0}';
    expect(upstreamRequestText(text, 'gate-m', 'org/up"model', false)).toBe('{"messages":[{"role":"user","content":"hi"}], "model":"org/up\\"model","temperature":1.0}');
  });

  it('asks for usage in front when told to', () => {
    expect(upstreamRequestText(' {"model":"gate-m","stream":true}', 'gate-m', 'up', true)).toBe(' {"stream_options":{"include_usage":true},"model":"up","stream":true}');
  });

  it('gives up (serialize instead) when the model key is spaced, escaped or named twice', () => {
    expect(upstreamRequestText('{"model": "gate-m"}', 'gate-m', 'up', false)).toBeUndefined();
    expect(upstreamRequestText('{"model":"gate\\u002dm"}', 'gate-m', 'up', false)).toBeUndefined();
    expect(upstreamRequestText('{"model":"gate-m","metadata":{"model":"gate-m"}}', 'gate-m', 'up', false)).toBeUndefined();
  });

  it('never matches the key inside a string', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: 'say "model":"gate-m"' }], model: 'gate-m' });
    const forwarded = JSON.parse(upstreamRequestText(text, 'gate-m', 'up', false)!) as { model: string; messages: { content: string }[] };
    expect(forwarded.model).toBe('up');
    expect(forwarded.messages[0]!.content).toBe('say "model":"gate-m"');
  });
});

describe('plainCompletion', () => {
  const openAi = JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Say "usage":{"prompt_tokens":1} and "finish_reason":"x"' }, finish_reason: 'length' }],
    usage: { prompt_tokens: 19, completion_tokens: 10, total_tokens: 29, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
  });

  /** What the parsing path reads from the same text. */
  function parsed(text: string): { usage: ReturnType<typeof usageOf>; finishReason: unknown } {
    const answer = JSON.parse(text) as Record<string, unknown>;
    const first = (answer.choices as unknown[])[0];
    return { usage: usageOf(answer.usage), finishReason: isRecord(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null };
  }

  it("reads OpenAI's answer: the counts of its own usage object and the finish reason, not the look-alikes in the content", () => {
    expect(plainCompletion(openAi)).toEqual({ usage: { promptTokens: 19, completionTokens: 10 }, finishReason: 'length' });
  });

  it('agrees with the parsing path whenever it answers, and leaves every doubtful form to it', () => {
    const completion = (usage: string, finish = '"stop"', extra = ''): string =>
      `{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":${finish}}]${extra},"usage":${usage}}`;
    const plain = [
      completion('{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2,"prompt_tokens_details":null}'),
      completion('{"completion_tokens":0,"prompt_tokens":7}', 'null'),
      completion('{"prompt_tokens":123456789012345,"completion_tokens":1}'),
    ];
    const doubtful = [
      completion('{"prompt_tokens": 3, "completion_tokens": 2}'), // spaced
      completion('{"details":{"prompt_tokens":3},"completion_tokens":2}'), // a count of a nested object
      completion('{"prompt_tokens":"3","completion_tokens":2}'),
      completion('{"prompt_tokens":3.0,"completion_tokens":2}'),
      completion('{"prompt_tokens":-3,"completion_tokens":2}'),
      completion('{"prompt_tokens":1234567890123456,"completion_tokens":2}'),
      completion('null'),
      completion('{"prompt_tokens":3,"completion_tokens":2}', '"stop"', ',"x":{"usage":{"prompt_tokens":9,"completion_tokens":9}}'),
      completion('{"prompt_tokens":3,"completion_tokens":2}', '"st\\"op"'),
      completion('{"prompt_tokens":3,"completion_tokens":2}', '"stop"', ',"error":null'),
      `{"choices":[{"finish_reason":"stop"},{"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
      `${completion('{"prompt_tokens":3,"completion_tokens":2}')}\n`,
      '{"id":"c","usage":{"prompt_tokens":3,"completion_tokens":2}}', // no choices
      '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2},"system_fingerprint":"fp', // cut short
    ];
    for (const text of plain) expect(plainCompletion(text), text).toEqual(parsed(text));
    for (const text of doubtful) expect(plainCompletion(text), text).toBeUndefined();
  });
});

describe('reading a chunk off its text', () => {
  const chunk = (fields: string): string => `{"id":"c","object":"chat.completion.chunk","model":"m",${fields}}`;

  it('agrees with the parsed chunk whenever it answers', () => {
    const texts = [
      chunk('"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null'),
      chunk('"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]'),
      chunk('"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46,"completion_tokens_details":{"reasoning_tokens":5}}'),
      chunk('"choices":[{"index":1,"delta":{},"finish_reason":"length"}]'),
      // lmgate's own usage, relayed by another lmgate: the 1-hour part of the cache writes.
      chunk('"choices":[],"usage":{"prompt_tokens":1511,"completion_tokens":37,"prompt_tokens_details":{"cached_tokens":1000,"cache_write_tokens":300,"cache_write_1h_tokens":100}}'),
      chunk('"choices":[{"delta":{"content":"\\"finish_reason\\":\\"stop\\",\\"index\\":3"},"finish_reason":null}]'),
    ];
    for (const text of texts) {
      const parsed = JSON.parse(text) as { choices: { index?: number; finish_reason: string | null }[]; usage?: unknown };
      const first = parsed.choices[0];
      const usage = textUsage(text);
      if (usage !== undefined) expect(usage, text).toEqual(usageOf(parsed.usage));
      if (text.includes('cache_write_1h')) expect(usage).toEqual({ promptTokens: 1511, completionTokens: 37, cachedTokens: 1000, cacheWriteTokens: 200, cacheWrite1hTokens: 100 });
      expect(textFinishReason(text), text).toBe(first?.finish_reason ?? null);
      expect(textIndexIsZero(text), text).toBe((first?.index ?? 0) === 0);
    }
  });

  it('reads the token kinds priced apart, as the parser does', () => {
    const text = chunk('"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46,"prompt_tokens_details":{"cached_tokens":8,"cache_write_tokens":2},"completion_tokens_details":{"reasoning_tokens":5}}');
    const expected = { promptTokens: 12, completionTokens: 34, cachedTokens: 8, cacheWriteTokens: 2, reasoningTokens: 5 };
    expect(textUsage(text)).toEqual(expected);
    expect(usageOf((JSON.parse(text) as { usage: unknown }).usage)).toEqual(expected);
    expect(textUsage(chunk('"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":null}}'))).toBeUndefined();
  });

  it('leaves every doubtful form to the parser', () => {
    expect(textUsage(chunk('"choices":[],"usage": {"prompt_tokens":1,"completion_tokens":2}'))).toBeUndefined();
    expect(textUsage(chunk('"choices":[],"usage":{"prompt_tokens":1},"x":{"usage":null}'))).toBeUndefined();
    expect(textUsage(chunk('"choices":[],"usage":{"prompt_tokens":1}'))).toBeUndefined();
    expect(textFinishReason(chunk('"choices":[{"finish_reason":"stop"},{"finish_reason":"stop"}]'))).toBeUndefined();
    expect(textFinishReason(chunk('"choices":[{"finish_reason": "stop"}]'))).toBeUndefined();
    expect(textFinishReason(chunk('"choices":[{"native_finish_reason":"stop"}]'))).toBeUndefined();
    expect(textFinishReason(chunk('"choices":[{"finish_reason":"st\\u006fp"}]'))).toBeUndefined();
    expect(textIndexIsZero(chunk('"choices":[{"index":0,"delta":{"tool_calls":[{"index":0}]}}]'))).toBe(false);
    expect(textIndexIsZero(chunk('"choices":[{"index":01}]'))).toBe(false);
  });
});

describe('textWithUsageCost', () => {
  it('puts the cost first in the one compact usage object, leaving every other byte as it was', () => {
    expect(textWithUsageCost('{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}}', '0.000061')).toBe(
      '{"choices":[],"usage":{"cost":0.000061,"prompt_tokens":3,"completion_tokens":4}}',
    );
    expect(textWithUsageCost('{"usage":{}}', '1.5')).toBe('{"usage":{"cost":1.5}}');
  });

  it('declines (the caller parses) an upstream cost, spaced JSON, a second usage, escapes or no usage object', () => {
    for (const text of [
      '{"usage":{"prompt_tokens":3,"cost":0.25}}',
      '{"usage": {"prompt_tokens":3}}',
      '{"usage":{"prompt_tokens":3},"x":{"usage":{}}}',
      '{"us\\u0061ge":{},"usage":{"prompt_tokens":3}}',
      '{"usage":null}',
      '{"choices":[]}',
    ]) {
      expect(textWithUsageCost(text, '0.1')).toBeUndefined();
    }
  });
});
