// "did you mean `port`?" for an unrecognized key: the keys the schema knows at that path,
// the nearest by edit distance when it is near enough to be a typo.
import type { z } from 'zod';

/** The keys the schema accepts at `path` (an object's shape, through defaults, pipes, records and unions). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const keys = new Set<string>();
  const visit = (node: z.ZodType, rest: readonly PropertyKey[]): void => {
    const def = node._zod.def as unknown as Record<string, unknown> & { type: string };
    switch (def.type) {
      case 'object': {
        const shape = def.shape as Record<string, z.ZodType>;
        if (rest.length === 0) for (const key of Object.keys(shape)) keys.add(key);
        else if (shape[String(rest[0])]) visit(shape[String(rest[0])]!, rest.slice(1));
        return;
      }
      case 'record':
        if (rest.length > 0) visit(def.valueType as z.ZodType, rest.slice(1));
        return;
      case 'array':
        if (rest.length > 0) visit(def.element as z.ZodType, rest.slice(1));
        return;
      case 'union':
        for (const option of def.options as z.ZodType[]) visit(option, rest);
        return;
      case 'pipe':
        visit(def.in as z.ZodType, rest);
        return;
      default:
        if (def.innerType) visit(def.innerType as z.ZodType, rest);
    }
  };
  visit(schema, path);
  return [...keys];
}

/** The known key `typed` is most likely a typo of, if any: at most 2 edits, and fewer than half its length. */
export function suggestKey(typed: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(typed.toLowerCase(), key.toLowerCase());
    if (distance <= 2 && distance < Math.max(typed.length, key.length) / 2 && (best === undefined || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

/** Levenshtein distance, with a swap of two neighbours counting as one edit (`prot` → `port`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
