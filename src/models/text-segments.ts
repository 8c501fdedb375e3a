// Cuts a text into segments the tokenizer handles in bounded time, so that counting or
// splitting any client text costs time linear in its length.
//
// gpt-tokenizer's byte-pair merge is quadratic in the length of one pre-tokenizer piece,
// and a run of letters, of punctuation or of whitespace with no split point is one piece:
// measured, 32,000 × "x" took 0.66 s and 16,000 random CJK characters 1.4 s, where short
// pieces cost 1–3 µs a character. Two kinds of cut:
//  - a run of whitespace or of non-whitespace is cut every MAX_RUN_CHARS characters, so no
//    piece is longer. Natural text has no such runs; text that does is counted as if split
//    there, which moves its count by a token or so per cut;
//  - a long text is cut about every SEGMENT_CHARS characters, at a single space between two
//    non-space characters, where the o200k pre-tokenizer splits anyway: the space starts the
//    next piece (" word", " .", " ") and nothing before it reaches past it. Counting such
//    segments one by one gives exactly the count of the whole, and lets a caller hand the
//    event loop back between them. A long text with no such space (spaced only by newlines,
//    say) is cut at another change between whitespace and the rest, close to exact.

/** Longest run of whitespace or of non-whitespace handed to the tokenizer in one piece. */
export const MAX_RUN_CHARS = 128;
/** Segments of a long text are about this long (cut at the next safe space after it). */
export const SEGMENT_CHARS = 4096;

export interface SegmentSizes {
  maxRunChars: number;
  segmentChars: number;
}

const DEFAULT_SIZES: SegmentSizes = { maxRunChars: MAX_RUN_CHARS, segmentChars: SEGMENT_CHARS };

/** The text's segments, in order; joined, they are the text. An empty text has none. */
export function* textSegments(text: string, sizes: SegmentSizes = DEFAULT_SIZES): Generator<string, void, undefined> {
  const { maxRunChars, segmentChars } = sizes;
  if (text.length <= maxRunChars) {
    if (text.length > 0) yield text;
    return;
  }
  let start = 0;
  let runStart = 0;
  let runIsSpace = isWhitespace(text.charCodeAt(0));
  for (let i = 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const isSpace = isWhitespace(code);
    if (isSpace !== runIsSpace) {
      runIsSpace = isSpace;
      runStart = i;
      const length = i - start;
      // Past twice the size with no safe space in sight (text spaced only by newlines or
      // double spaces), any change of class will do: bounded beats exact here.
      if ((length >= segmentChars && code === SPACE && isSafeSpace(text, i)) || length >= 2 * segmentChars) {
        yield text.slice(start, i);
        start = i;
      }
    } else if (i - runStart >= maxRunChars && !isLowSurrogate(code)) {
      // Never between the two halves of a surrogate pair: that would make two lone halves.
      yield text.slice(start, i);
      start = i;
      runStart = i;
    }
  }
  yield text.slice(start);
}

const SPACE = 0x20;

/** A single space with a non-space character on each side. */
function isSafeSpace(text: string, at: number): boolean {
  return at + 1 < text.length && !isWhitespace(text.charCodeAt(at - 1)) && !isWhitespace(text.charCodeAt(at + 1));
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The characters of the regular expression class `\s`, which the pre-tokenizer splits on. */
function isWhitespace(code: number): boolean {
  if (code <= SPACE) return code === SPACE || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
