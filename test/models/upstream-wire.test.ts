import { describe, expect, it } from 'vitest';
import { ModelRenamer, upstreamErrorMessage } from '../../src/models/upstream/wire.js';

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

describe('upstreamErrorMessage', () => {
  it("reads OpenAI's, llama.cpp's and FastAPI's error shapes", () => {
    expect(upstreamErrorMessage('{"error":{"message":"too long"}}')).toBe('too long');
    expect(upstreamErrorMessage('{"error":"bad"}')).toBe('bad');
    expect(upstreamErrorMessage('{"detail":"nope"}')).toBe('nope');
    expect(upstreamErrorMessage('<html>502</html>')).toBeUndefined();
  });
});
