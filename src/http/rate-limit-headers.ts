import type { RateLimitState } from '../errors.js';

/** X-RateLimit-* (spec 7.1, 8): on every authenticated API response, and on 429. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(Math.max(0, state.remaining)),
    'x-ratelimit-reset': String(state.resetAtUnixSec),
  };
}
