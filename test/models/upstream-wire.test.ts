import { describe, expect, it } from 'vitest';
import { ModelRenamer, upstreamErrorMessage, upstreamRequestText } from '../../src/models/upstream/wire.js';

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
