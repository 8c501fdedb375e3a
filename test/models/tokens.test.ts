import { decode, encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/chat/chat-request.js';
import { countPromptTokens, countTextTokens, splitIntoTokens } from '../../src/models/tokens.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('countTextTokens', () => {
  it('counts o200k tokens of a text', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('Hello world')).toBe(2);
    expect(countTextTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
  });

  it('counts special-token markers in client text as plain text instead of throwing', () => {
    const text = 'ignore <|endoftext|> and <|im_start|>';
    expect(countTextTokens(text)).toBeGreaterThan(4);
    expect(countTextTokens(text)).toBe(splitIntoTokens(text).length);
  });
});

describe('countPromptTokens', () => {
  // OpenAI's accounting: 3 per message + role + content (+ 1 + name), and 3 to prime the reply.
  it('adds 3 per message, the role and content tokens, and 3 for the reply priming', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hello world' }];
    expect(countPromptTokens(messages)).toBe(3 + 1 + 2 + 3);
  });

  it('sums over messages, with 1 extra token plus the name for a named message', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', name: 'alice', content: 'Hello world' },
    ];
    const expected =
      3 + countTextTokens('system') + countTextTokens('You are terse.') +
      3 + countTextTokens('user') + 1 + countTextTokens('alice') + 2 +
      3;
    expect(countPromptTokens(messages)).toBe(expected);
  });

  it('counts the text of content parts and ignores non-text parts', () => {
    const parts: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          { type: 'text', text: ' world' },
        ],
      },
    ];
    const asString: ChatMessage[] = [{ role: 'user', content: 'Hello' + ' world' }];
    expect(countPromptTokens(parts)).toBe(3 + 1 + countTextTokens('Hello') + countTextTokens(' world') + 3);
    expect(countPromptTokens(parts)).toBe(countPromptTokens(asString));
  });

  it("counts an assistant's tool call names and arguments, and a null content as nothing", () => {
    const args = '{"city":"Paris","unit":"celsius"}';
    const messages: ChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C and sunny' },
    ];
    const expected =
      3 + countTextTokens('assistant') + countTextTokens('get_weather') + countTextTokens(args) +
      3 + countTextTokens('tool') + countTextTokens('18C and sunny') +
      3;
    expect(countPromptTokens(messages)).toBe(expected);
  });

  it('counts a refusal content part by its refusal text', () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
    ];
    expect(countPromptTokens(messages)).toBe(3 + 1 + countTextTokens('I cannot help with that.') + 3);
  });
});

describe('splitIntoTokens', () => {
  it('gives one string per token, each the decoded token for plain text', () => {
    const text = 'The quick brown fox jumps over the lazy dog.';
    const pieces = splitIntoTokens(text);
    expect(pieces).toEqual(encode(text).map((token) => decode([token])));
    expect(pieces.join('')).toBe(text);
  });

  it('keeps multi-byte characters whole while keeping one entry per token', () => {
    const text = 'Grüße aus Köln 👋🏽 — 日本語のテキスト 🧑‍🚀! ñ ✓';
    const pieces = splitIntoTokens(text);
    expect(pieces.length).toBe(countTextTokens(text));
    expect(pieces.join('')).toBe(text);
    // Some emoji straddles two tokens: the first yields nothing decodable on its own.
    expect(pieces).toContain('');
    for (const piece of pieces) {
      expect(piece).not.toContain('\uFFFD');
      expect(piece).not.toMatch(LONE_SURROGATE);
    }
  });

  it('returns no pieces for an empty text', () => {
    expect(splitIntoTokens('')).toEqual([]);
  });
});

describe('long prompts', () => {
  const user = (content: string): ChatMessage[] => [{ role: 'user', content }];

  it('counts a short prompt at once and a long one in slices, to the same total', async () => {
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    expect(typeof countPromptTokens(user(sentence))).toBe('number');
    const long = sentence.repeat(2000);
    const counted = countPromptTokens(user(long));
    expect(counted).toBeInstanceOf(Promise);
    expect(await counted).toBe(3 + 1 + countTextTokens(long) + 3);
    expect(countTextTokens(long)).toBe(encode(long).length);
  });

  it('stops counting once the count passes the limit', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(50_000);
    const full = await countPromptTokens(user(long));
    const stopped = await countPromptTokens(user(long), 1000);
    expect(stopped).toBeGreaterThan(1000);
    expect(stopped).toBeLessThan(full / 10);
  });

  it('counts a run with no split point in pieces, as many tokens as its split text', () => {
    const run = 'x'.repeat(100_000);
    expect(countTextTokens(run)).toBe(splitIntoTokens(run).length);
    expect(splitIntoTokens(run).join('')).toBe(run);
    // About 8 characters a token, as the tokenizer merges runs of x.
    expect(countTextTokens(run)).toBeGreaterThan(100_000 / 16);
    expect(countTextTokens(run)).toBeLessThan(100_000 / 4);
  });
});
