// Bounds on a JSON body's structure, checked on its text before it is parsed.
//
// JSON.parse is linear, but not cheap per value: 4 MB of `{}` or of distinct strings took
// 130–250 ms to parse here, while 4 MB of one string took 3 ms. A body within the byte
// limit could hold the event loop that long, so objects, arrays and strings are counted
// first (one pass, ~3 ns a character) and a body with too many is refused unparsed. Depth
// is bounded too: JSON.parse copes with any depth, but JSON.stringify and every recursive
// walk overflow the stack past a few thousand levels.
import { PayloadTooLargeError } from '../errors.js';

/** Objects, arrays and strings (keys included) one body may hold: parsed in ~20 ms at most. */
export const MAX_JSON_VALUES = 100_000;
/** Nesting of objects and arrays; OpenAI's own tool schemas stay far below it. */
export const MAX_JSON_DEPTH = 64;

/**
 * The index of the quote closing the string opened at `openAt` (text.length when there is
 * none: JSON.parse refuses that). indexOf skips the string's text much faster than a loop.
 */
function endOfString(text: string, openAt: number): number {
  let at = openAt;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at === -1) return text.length;
    // Escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** Throws PayloadTooLargeError when the JSON text holds too many values or nests too deep. */
export function assertJsonBounds(text: string): void {
  let values = 0;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      values++;
      i = endOfString(text, i);
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      values++;
      if (++depth > MAX_JSON_DEPTH) throw new PayloadTooLargeError({ kind: 'json_depth', limit: MAX_JSON_DEPTH });
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    } else {
      continue;
    }
    if (values > MAX_JSON_VALUES) throw new PayloadTooLargeError({ kind: 'json_values', limit: MAX_JSON_VALUES });
  }
}
