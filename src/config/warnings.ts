// What a config says that is valid but probably not meant: found when it is loaded (from
// what the operator wrote, before defaults fill it in) and logged once by `serve`, one line each.
import { DEFAULT_TIERS, type Config } from './schema.js';

const recorded = new WeakMap<Config, readonly string[]>();

/** The warnings found when `config` was loaded; none for a config built otherwise. */
export function warningsOf(config: Config): readonly string[] {
  return recorded.get(config) ?? [];
}

export function recordWarnings(config: Config, written: Record<string, unknown>): void {
  recorded.set(config, Object.freeze(findWarnings(written)));
}

function findWarnings(written: Record<string, unknown>): string[] {
  const warnings: string[] = [];
  // A model without `price` costs nothing: fine for a local model, costly by accident for a paid one.
  if (isRecord(written.models)) {
    for (const [id, model] of Object.entries(written.models)) {
      if (isRecord(model) && !('price' in model)) {
        warnings.push(`models.${id} has no price, so calls to it are free: set price (credits per million tokens), or price: 0 to make it free on purpose`);
      }
    }
  }
  // `tiers:` replaces the default tiers whole; one it leaves out is gone, with its accounts served as default_tier.
  if (isRecord(written.tiers)) {
    const dropped = Object.keys(DEFAULT_TIERS).filter((name) => !(name in (written.tiers as Record<string, unknown>)));
    if (dropped.length > 0) {
      warnings.push(`tiers in the config replace every default tier: ${dropped.join(', ')} ${dropped.length === 1 ? 'is' : 'are'} no longer a tier (list ${dropped.length === 1 ? 'it' : 'them'} under tiers: to keep ${dropped.length === 1 ? 'it' : 'them'})`);
    }
  }
  return warnings;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
