// The house rules a compiler does not check: no import circle among src/ modules (type
// imports included: a circle of types is still a circle of concepts), the layers (a module
// imports only from its own layer or those below it, and never along the pairs that must
// not happen), and no file over 400 lines.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../src');
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Relative imports and re-exports of a module, as absolute .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
}

/** Every cycle found by a depth-first walk, each as its chain of files. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * The layers, lowest first: each top-level folder (or file) of src/ is in one. The kernel
 * is what everything may use; the store knows nothing of billing; the domain (billing,
 * models and the API dialects' translations) knows nothing of who calls it; the services
 * (keys, sessions, commands, shared mode, payments) nothing of the HTTP surfaces; only the
 * composition root builds the whole.
 */
/**
 * An API dialect is one folder: its wire types and translation on the domain layer, and in
 * its `http/` its route, event stream and error rendering on the HTTP layer.
 */
const DIALECTS = ['chat', 'anthropic', 'responses', 'completions', 'embeddings'];
const DIALECT_ROUTES = DIALECTS.map((dialect) => `${dialect}/http`);

const LAYERS: string[][] = [
  ['errors', 'lmgate-error', 'request-errors', 'ids', 'clock', 'money', 'maybe-promise', 'expiry'],
  ['config'],
  ['store'],
  ['billing', 'limits', 'models', ...DIALECTS, 'mail', 'observability', 'validation'],
  ['auth', 'web-session', 'cluster', 'commands', 'shared', 'payments', 'webhooks', 'alerts'],
  ['http', ...DIALECT_ROUTES, 'dashboard', 'admin'],
  ['app', 'services', 'cli', 'main'],
];
/** Imports upward that are allowed: the surfaces' routes take the app's services (a type). */
const UPWARD_ALLOWED = new Set(['http', ...DIALECT_ROUTES, 'dashboard', 'admin'].map((surface) => `${surface} → services`));
/**
 * Within a layer, imports that never happen: the dashboard and the console stand side by
 * side on the HTTP layer (its error rendering, its type provider), and it knows neither;
 * no dialect's routes know another's, nor the dashboard or the console.
 */
const NEVER = new Set([
  'dashboard → admin',
  'admin → dashboard',
  'http → dashboard',
  'http → admin',
  ...DIALECT_ROUTES.flatMap((routes) => [
    `${routes} → dashboard`,
    `${routes} → admin`,
    ...DIALECT_ROUTES.filter((other) => other !== routes).map((other) => `${routes} → ${other}`),
  ]),
]);

/** The top-level folder (or file, without .ts) of src/ a module is in; a dialect's `http/` is a unit of its own. */
function unitOf(file: string): string {
  const [first, second, ...rest] = relative(SRC, file).split('/');
  if (second === undefined) return first!.replace(/\.ts$/, '');
  return DIALECTS.includes(first!) && second === 'http' && rest.length > 0 ? `${first}/http` : first!;
}

/** Every import that breaks a layer rule, as "from → to (file)". */
function layerBreaks(graph: Map<string, string[]>): string[] {
  const rank = new Map(LAYERS.flatMap((units, i) => units.map((unit) => [unit, i] as const)));
  const breaks: string[] = [];
  for (const [file, imports] of graph) {
    const from = unitOf(file);
    for (const target of imports) {
      const to = unitOf(target);
      if (from === to) continue;
      const pair = `${from} → ${to}`;
      const [fromRank, toRank] = [rank.get(from), rank.get(to)];
      const broken = fromRank === undefined || toRank === undefined || (toRank > fromRank && !UPWARD_ALLOWED.has(pair)) || NEVER.has(pair);
      if (broken) breaks.push(`${pair} (${relative(SRC, file)})`);
    }
  }
  return breaks;
}

describe('the module graph of src/', () => {
  const files = sourceFiles(SRC);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));

  it('resolves every relative import to a file that exists', () => {
    const known = new Set(files);
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((target) => !known.has(target)).map((target) => `${relative(SRC, file)} → ${relative(SRC, target)}`));
    expect(missing).toEqual([]);
  });

  it('has no import circle', () => {
    const cycles = findCycles(graph).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '));
    expect(cycles).toEqual([]);
  });

  it('finds a circle when there is one', () => {
    const graph = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]);
    expect(findCycles(graph)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('keeps the layers: every import goes to its own layer or one below, and never one of the pairs that must not happen', () => {
    expect(layerBreaks(graph)).toEqual([]);
  });

  it('finds a broken layer rule when there is one', () => {
    const at = (path: string): string => join(SRC, path);
    const broken = new Map([
      [at('store/ledger.ts'), [at('billing/usage.ts'), at('money.ts')]],
      [at('admin/caller.ts'), [at('dashboard/context.ts'), at('services.ts')]],
      [at('billing/metering.ts'), [at('store/store.ts')]],
      [at('nowhere/new.ts'), []],
      [at('anthropic/request-translation.ts'), [at('anthropic/http/sse.ts')]],
      [at('anthropic/http/messages-route.ts'), [at('chat/http/chat-completions-route.ts'), at('http/metered-route.ts'), at('anthropic/messages-wire.ts')]],
    ]);
    expect(layerBreaks(broken)).toEqual([
      'store → billing (store/ledger.ts)',
      'admin → dashboard (admin/caller.ts)',
      'anthropic → anthropic/http (anthropic/request-translation.ts)',
      'anthropic/http → chat/http (anthropic/http/messages-route.ts)',
    ]);
  });

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });
});
