import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../src/models/lorem-text.js';
import { MAX_RUN_CHARS, textSegments } from '../../src/models/text-segments.js';

const SMALL = { maxRunChars: 16, segmentChars: 64 };
const AS_PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Longest run of whitespace or of non-whitespace characters. */
function longestRun(text: string): number {
  let longest = 0;
  for (const [run] of text.matchAll(/\s+|\S+/gu)) longest = Math.max(longest, run.length);
  return longest;
}

/** Text the way people write it: words, numbers, punctuation, single and double spaces, newlines. */
function naturalText(seed: number, words: number): string {
  const random = createRandom(seed);
  const vocabulary = ['the', 'Model', 'answers', "it's", 'über', '数据', 'ok', '42', '3.14', 'hello,', 'world.', '(x)', '"quoted"', '—', '😀', 'naïve', 'URL:', 'don\'t'];
  const gaps = [' ', ' ', ' ', ' ', '  ', '\n', '\n\n', ' \n', '\t'];
  let text = '';
  for (let i = 0; i < words; i++) {
    text += vocabulary[Math.floor(random() * vocabulary.length)]!;
    text += gaps[Math.floor(random() * gaps.length)]!;
  }
  return text;
}

describe('textSegments', () => {
  it('yields nothing for an empty text and a short text whole', () => {
    expect([...textSegments('')]).toEqual([]);
    expect([...textSegments('Hello world')]).toEqual(['Hello world']);
  });

  it('gives the text back when joined, for any text', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const text = naturalText(seed, 500) + 'x'.repeat(seed * 7) + ' '.repeat(seed * 5) + '的'.repeat(seed * 3);
      expect([...textSegments(text, SMALL)].join('')).toBe(text);
    }
  });

  it('cuts every run of letters, punctuation or whitespace at the maximum run length', () => {
    const text = `start ${'x'.repeat(1000)} ${'!'.repeat(300)}${' '.repeat(200)}${'数'.repeat(500)} end`;
    const segments = [...textSegments(text)];
    expect(segments.join('')).toBe(text);
    for (const segment of segments) expect(longestRun(segment)).toBeLessThanOrEqual(MAX_RUN_CHARS);
    // Cuts: 7 in the x's, 2 in the !'s, 1 in the spaces, 3 in the 数's.
    expect(segments).toHaveLength(1 + 7 + 2 + 1 + 3);
  });

  it('never cuts between the two halves of a surrogate pair', () => {
    const text = '😀'.repeat(1000);
    for (const segment of textSegments(text, SMALL)) {
      expect(segment.length % 2).toBe(0);
      expect(segment.codePointAt(0)).toBe(0x1f600);
    }
  });

  it('cuts a long natural text into segments whose counts add up to the exact count', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const text = naturalText(seed, 400);
      const segments = [...textSegments(text, { maxRunChars: 128, segmentChars: 64 })];
      expect(segments.length).toBeGreaterThan(10);
      const summed = segments.reduce((sum, segment) => sum + countTokens(segment, AS_PLAIN_TEXT), 0);
      expect(summed, `seed ${seed}`).toBe(countTokens(text, AS_PLAIN_TEXT));
    }
  });

  it('bounds the segments of a long text spaced only by newlines', () => {
    const text = 'word\n'.repeat(2000);
    const segments = [...textSegments(text, SMALL)];
    expect(segments.join('')).toBe(text);
    for (const segment of segments) expect(segment.length).toBeLessThanOrEqual(2 * SMALL.segmentChars + 5);
  });
});
