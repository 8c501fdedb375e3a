// What a valid config probably does not mean, warned of at start (config/warnings.ts): a
// model without a price (price: 0 makes free deliberate), and tiers: replacing a default
// tier. And an unknown key's error names the file and the key it is likely a typo of.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { warningsOf } from '../../src/config/warnings.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'lmgate-config-warnings-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function load(yaml: string) {
  writeFileSync(join(dir, 'lmgate.yaml'), yaml);
  return loadConfig({ env: {}, cwd: dir });
}

function problemsOf(yaml: string): string[] {
  try {
    load(yaml);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config warnings at start', () => {
  it('none for the defaults', () => {
    expect(warningsOf(load(''))).toEqual([]);
  });

  it('a model without a price is free and warned of, one line each; price: 0 is free on purpose', () => {
    const config = load('models:\n  local: { backend: demo, kind: echo }\n  gratis: { backend: demo, kind: lorem, price: 0 }\n  paid: { backend: demo, kind: echo, price: { input: 1, output: 2 } }\n');
    expect(warningsOf(config)).toEqual(['models.local has no price, so calls to it are free: set price (credits per million tokens), or price: 0 to make it free on purpose']);
    expect(config.models.gratis!.price).toEqual({ input: 0, cached_input: 0, cache_write: 0, cache_write_1h: 0, output: 0, reasoning: 0 });
    expect(config.models.local!.price.output).toBe(0);
  });

  it('tiers: that leave out a default tier say which is gone; keeping both names says nothing', () => {
    const replaced = load('tiers:\n  free: { rpm: 1, tpm: 1, concurrency: 1, models: ["*"] }\n  gold: { rpm: 1, tpm: 1, concurrency: 1, models: ["*"] }\n');
    expect(warningsOf(replaced)).toEqual(['tiers in the config replace every default tier: pro is no longer a tier (list it under tiers: to keep it)']);
    const kept = load('tiers:\n  free: { rpm: 1, tpm: 1, concurrency: 1, models: ["*"] }\n  pro: { rpm: 2, tpm: 2, concurrency: 2, models: ["*"], subscription: true }\n');
    expect(warningsOf(kept)).toEqual([]);
  });
});

describe('an unknown key', () => {
  it('names the file and the key it is likely a typo of', () => {
    const path = join(dir, 'lmgate.yaml');
    expect(problemsOf('server:\n  prot: 8080\n')).toEqual([`server: Unrecognized key: "prot" (did you mean "port"?) (in ${path})`]);
    expect(problemsOf('sever:\n  port: 8080\n')).toEqual([`(root): Unrecognized key: "sever" (did you mean "server"?) (in ${path})`]);
    expect(problemsOf('redis:\n  key_prefx: a\n')).toEqual([`redis: Unrecognized key: "key_prefx" (did you mean "key_prefix"?) (in ${path})`]);
    expect(problemsOf('models:\n  m: { backend: demo, kind: echo, prce: 0 }\n')).toEqual([`models.m: Unrecognized key: "prce" (did you mean "price"?) (in ${path})`]);
  });

  it('suggests nothing when no known key is near', () => {
    expect(problemsOf('server:\n  colour: blue\n')).toEqual([`server: Unrecognized key: "colour" (in ${join(dir, 'lmgate.yaml')})`]);
  });
});
