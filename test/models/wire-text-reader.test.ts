// The text readers of wire.ts against JSON.parse on generated bodies: chunk- and
// answer-shaped objects with random key order, spacing, escapes, nested members that
// reuse the readers' key names, and strings that contain them. A reader may decline
// (undefined: the caller parses), but whatever it answers must be what parsing gives for
// the text's only member of that name, wherever it is (see wire.ts).
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../src/models/lorem-text.js';
import { ModelRenamer, plainCompletion, textFinishReason, textIndexIsZero, textStringMember, textUsage } from '../../src/models/upstream/wire.js';

const BODIES = 20_000;

const KEY_NAMES = ['usage', 'finish_reason', 'index', 'model', 'prompt_tokens', 'completion_tokens', 'native_finish_reason', 'error', 'content', 'delta', 'x'];
const TEXTS = ['hi', 'usage"', '"usage":{"prompt_tokens":1}', 'finish_reason":"stop', '\\', 'model":"m"', 'é ☃ 😀', '', 'index":0', 'say "content":"x"\\', 'a\n\tb\\"', '\\\\"'];

function generator(next: () => number) {
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const chance = (p: number): boolean => next() < p;
  const count = (): unknown => pick([0, 1, 7, 42, 1e3, 12345678901, 1.5, -3, 2e1, 'x', null, 9007199254740993]);
  const value = (depth: number): unknown => {
    if (depth > 2 || chance(0.5)) return pick<unknown>([pick(TEXTS), count(), true, null]);
    if (chance(0.3)) return [value(depth + 1), value(depth + 1)];
    const object: Record<string, unknown> = {};
    for (let i = 0; i < 1 + Math.floor(next() * 3); i++) object[pick(KEY_NAMES)] = value(depth + 1);
    return object;
  };
  const usage = (): unknown =>
    chance(0.15) ? null : chance(0.1) ? value(1) : { prompt_tokens: count(), completion_tokens: count(), total_tokens: count(), ...(chance(0.3) ? { prompt_tokens_details: { cached_tokens: 0 } } : {}) };
  const choice = (): Record<string, unknown> => {
    const entries: [string, unknown][] = [
      ['index', chance(0.8) ? 0 : pick([1, 2, '0', null])],
      ['delta', chance(0.5) ? { content: pick(TEXTS) } : value(1)],
      ['finish_reason', chance(0.6) ? pick(['stop', 'length', null, 'st\\"op', 'tool_calls']) : value(2)],
    ];
    if (chance(0.2)) entries.push([pick(KEY_NAMES), value(1)]);
    return Object.fromEntries(shuffle(entries).filter(() => !chance(0.1)));
  };
  const body = (): Record<string, unknown> => {
    const entries: [string, unknown][] = [
      ['id', 'chatcmpl-1'],
      ['object', 'chat.completion.chunk'],
      ['model', pick(['up', 'other', 'up"x', 'up\\u0070'])],
      ['choices', chance(0.9) ? Array.from({ length: pick([0, 1, 1, 1, 2]) }, choice) : value(1)],
    ];
    if (chance(0.6)) entries.push(['usage', usage()]);
    if (chance(0.3)) entries.push([pick(KEY_NAMES), value(1)]);
    return Object.fromEntries(shuffle(entries).filter(() => !chance(0.05)));
  };
  const shuffle = <T,>(items: T[]): T[] => {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  };
  const text = (object: unknown): string => {
    const compact = JSON.stringify(object);
    if (chance(0.7)) return compact;
    if (chance(0.5)) return JSON.stringify(object, null, pick([1, 2]));
    // Characters escaped that need not be: what another encoder may write.
    return compact.replace(/"(?:[^"\\]|\\.)*"/g, (string) =>
      string.replace(/(?<!\\)[a-z]/g, (letter) => (chance(0.05) ? `\\u${letter.charCodeAt(0).toString(16).padStart(4, '0')}` : letter)),
    );
  };
  return { body, text };
}

/** Every value of a member named `key`, at any depth (the readers answer for a text's only one). */
function membersNamed(value: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const item of value) membersNamed(item, key, found);
  else if (value !== null && typeof value === 'object') {
    for (const [name, member] of Object.entries(value)) {
      if (name === key) found.push(member);
      membersNamed(member, key, found);
    }
  }
  return found;
}

/** What parsing says each reader should answer. */
function truthOf(parsed: Record<string, unknown>) {
  const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  const usages = membersNamed(parsed, 'usage') as (Record<string, unknown> | null)[];
  const usage = usages[0];
  return {
    usages: usages.length,
    usage:
      usage === undefined || usage === null
        ? null
        : typeof usage === 'object' && !Array.isArray(usage) && isCount(usage.prompt_tokens) && isCount(usage.completion_tokens)
          ? { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens }
          : 'not a usage',
    finishReasons: membersNamed(parsed, 'finish_reason'),
    indexes: membersNamed(parsed, 'index'),
  };
}

describe('the text readers of wire.ts against JSON.parse', () => {
  it('does not rename a model that a later escaped key overrides', () => {
    const text = '{"model":"up","mod\\u0065l":"up","choices":[]}';
    expect(JSON.parse(text)).toEqual({ model: 'up', choices: [] });
    expect(new ModelRenamer('lmgate-model', 'up').renameText(text)).toBeUndefined();
  });

  it(`answer what parsing gives, or decline, on ${BODIES} generated bodies`, () => {
    const { body, text } = generator(createRandom(20_261_125));
    const answered = { usage: 0, finishReason: 0, index: 0, rename: 0, member: 0 };
    for (let i = 0; i < BODIES; i++) {
      const object = body();
      const json = text(object);
      const parsed = JSON.parse(json) as Record<string, unknown>;
      const truth = truthOf(parsed);
      const where = `body ${i}: ${json}`;

      const usage = textUsage(json);
      if (usage !== undefined) {
        answered.usage++;
        expect(truth.usages, where).toBeLessThanOrEqual(1);
        expect(usage, where).toEqual(truth.usage);
      }
      const finishReason = textFinishReason(json);
      if (finishReason !== undefined) {
        answered.finishReason++;
        expect(truth.finishReasons.length, where).toBeLessThanOrEqual(1);
        expect(finishReason, where).toBe(truth.finishReasons[0] ?? null);
      }
      if (textIndexIsZero(json)) {
        answered.index++;
        expect(truth.indexes.every((index) => index === 0), where).toBe(true);
      }
      for (const key of ['content', 'delta']) {
        const member = textStringMember(json, `${key}"`);
        if (member !== undefined) {
          answered.member++;
          const values = membersNamed(parsed, key);
          expect(values.length, where).toBeLessThanOrEqual(1);
          expect(member, where).toBe(values[0] === undefined || values[0] === null ? '' : values[0]);
        }
      }
      const completion = plainCompletion(json);
      if (completion !== undefined) {
        expect(completion.usage, where).toEqual(truth.usage);
        expect(completion.finishReason, where).toBe(truth.finishReasons[0] ?? null);
      }
      if (typeof parsed.model === 'string') {
        const renamed = new ModelRenamer('lmgate-model', parsed.model).renameText(json);
        if (renamed !== undefined) {
          answered.rename++;
          expect(JSON.parse(renamed), where).toEqual({ ...parsed, model: 'lmgate-model' });
        }
      }
    }
    // The readers must actually answer for most bodies, or the test checks nothing.
    expect(answered.usage).toBeGreaterThan(BODIES / 4);
    expect(answered.finishReason).toBeGreaterThan(BODIES / 4);
    expect(answered.index).toBeGreaterThan(BODIES / 4);
    expect(answered.rename).toBeGreaterThan(BODIES / 4);
    expect(answered.member).toBeGreaterThan(BODIES / 4);
  });
});
