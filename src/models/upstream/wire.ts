// OpenAI's chat wire format, as lmgate reads it from upstreams.
//
// Most of it is read off the text, without JSON.parse: an upstream's answer or stream
// chunk is relayed as the bytes it came in (with only `model` replaced), and lmgate needs
// three facts from it (usage, finish_reason, the choice index). Parsing a chunk to learn
// them and stringifying it again cost more CPU than the rest of the relay together; the
// readers below cost a few indexOf calls. They are safe because JSON escapes every quote
// inside a string, so `usage"` found in the text is a key, never content; and they answer
// only for a key that occurs exactly once, with a plain value, in text without \u escapes.
// Anything else they decline (undefined), and the caller parses. They answer for the
// text's only member of that name wherever it sits, which in OpenAI's shapes is the one
// meant. test/models/wire-text-reader.test.ts checks them against JSON.parse on
// generated bodies.
import { splitCacheWrites, type Usage } from '../../billing/usage.js';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object's text parsed; null when it is not one. */
export function parsedOrNull(data: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Token kinds priced apart, as the keys that report them (in OpenAI's `*_details` objects) and where they go. */
const PRICED_PARTS = [
  ['cached_tokens"', 'cachedTokens'],
  ['cache_write_tokens"', 'cacheWriteTokens'],
  ['cache_write_1h_tokens"', 'cacheWrite1hTokens'],
  ['reasoning_tokens"', 'reasoningTokens'],
] as const;

/** A token count as an upstream reports it: a non-negative safe integer. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The generated text of a message or a delta: what the model was paid to write. */
export function textOfMessage(message: Record<string, unknown>): string {
  // Called for every streamed chunk: plain property reads, no field list to walk.
  const { content, refusal, reasoning_content: reasoningContent, reasoning, tool_calls: toolCalls } = message;
  let text = typeof content === 'string' ? content : '';
  if (typeof refusal === 'string') text += refusal;
  // reasoning_content: vLLM and DeepSeek reasoning models; reasoning: Ollama.
  if (typeof reasoningContent === 'string') text += reasoningContent;
  if (typeof reasoning === 'string') text += reasoning;
  if (Array.isArray(toolCalls)) {
    for (const toolCall of toolCalls) {
      if (!isRecord(toolCall) || !isRecord(toolCall.function)) continue;
      const { name, arguments: args } = toolCall.function;
      if (typeof name === 'string') text += name;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}

// Reading an answer or an event off its text, without parsing it. A quote inside a JSON
// string is always escaped, so a key found is a key, not text. Each key is looked for from
// its first letter: JSON is full of quotes, and a search starting with one stops at every
// string. Anything doubtful (a key twice, spaced JSON, an escape) is left to the parser:
// the readers answer undefined.

/** The text is one whole JSON object (as far as its frame shows) that reports no error. */
export function isPlainObject(text: string): boolean {
  return text.charCodeAt(0) === 123 /* { */ && text.charCodeAt(text.length - 1) === 125 /* } */ && !text.includes('error"');
}

/**
 * What lmgate needs from a non-streamed answer, read off its text (the common case): with
 * `choices`, its usage and at most one `finish_reason`. Undefined: the caller parses it.
 */
export function plainCompletion(text: string): { usage: Usage; finishReason: string | null } | undefined {
  if (!isPlainObject(text) || !text.includes('choices":[')) return undefined;
  const usage = textUsage(text);
  const finishReason = textFinishReason(text);
  if (usage === undefined || usage === null || finishReason === undefined) return undefined;
  return { usage, finishReason };
}

/** The `usage` member: null when absent or null; its counts when it is one compact object whose own counts are plain integers. */
export function textUsage(text: string): Usage | null | undefined {
  if (hasUnicodeEscape(text)) return undefined;
  if (!text.includes('usage"')) return null;
  const at = onlyKey(text, 'usage"');
  if (at === -1) return undefined;
  if (text.startsWith(':null', at + 6)) return null;
  if (!text.startsWith(':{', at + 6)) return undefined;
  const promptTokens = countAfter(text, at + 8, 'prompt_tokens"');
  const completionTokens = countAfter(text, at + 8, 'completion_tokens"');
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  const usage: Usage = { promptTokens, completionTokens };
  // OpenAI reports its details (mostly zeros) on every answer: read, not parsed.
  for (const [key, kind] of PRICED_PARTS) {
    if (!text.includes(key, at)) continue;
    const count = partCountAfter(text, at, key);
    if (count === undefined) return undefined;
    if (count > 0) usage[kind] = count;
  }
  if (usage.cacheWrite1hTokens !== undefined) {
    // Read as the whole's part: split as the parsed reader does.
    const oneHour = usage.cacheWrite1hTokens;
    delete usage.cacheWrite1hTokens;
    splitCacheWrites(usage, oneHour);
  }
  return usage;
}

/** A count member nested anywhere after `from` (a `*_details` object's), once in the text: a plain integer. */
function partCountAfter(text: string, from: number, key: string): number | undefined {
  const at = onlyKey(text, key);
  if (at < from || !text.startsWith(':', at + key.length)) return undefined;
  return plainInteger(text, at + key.length + 1);
}

/** The one `finish_reason`: null when absent or null; the reason when it is a string without escapes. */
export function textFinishReason(text: string): string | null | undefined {
  if (hasUnicodeEscape(text)) return undefined;
  const at = text.indexOf('finish_reason"');
  if (at === -1) return null;
  // Another key ending the same way (OpenRouter's native_finish_reason) is left to the parser.
  if (text.charCodeAt(at - 1) !== 34 /* " */ || text.includes('finish_reason"', at + 14)) return undefined;
  if (text.startsWith(':null', at + 14)) return null;
  if (!text.startsWith(':"', at + 14)) return undefined;
  const end = text.indexOf('"', at + 16);
  const reason = end === -1 ? '\\' : text.slice(at + 16, end);
  return reason.includes('\\') ? undefined : reason;
}

/** Whether the text's only `index` is 0, or it has none (OpenAI's default). */
export function textIndexIsZero(text: string): boolean {
  if (hasUnicodeEscape(text)) return false;
  if (!text.includes('index"')) return true;
  const at = onlyKey(text, 'index"');
  if (at === -1 || !text.startsWith(':0', at + 6)) return false;
  const next = text.charCodeAt(at + 8);
  return next === 44 /* , */ || next === 125 /* } */;
}

/**
 * The one member named `key` (without its opening quote: `content"`) as a string: '' when
 * absent or null, its value when it is a string; undefined (the caller parses) otherwise.
 * A value with escapes is decoded by JSON.parse on that string alone.
 */
export function textStringMember(text: string, key: string): string | undefined {
  if (hasUnicodeEscape(text)) return undefined;
  if (!text.includes(key)) return '';
  const at = onlyKey(text, key);
  if (at === -1) return undefined;
  const valueAt = at + key.length;
  if (text.startsWith(':null', valueAt)) return '';
  if (!text.startsWith(':"', valueAt)) return undefined;
  const start = valueAt + 2;
  // The closing quote is the first one not escaped: preceded by an even run of backslashes.
  let end = text.indexOf('"', start);
  while (end !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) break;
    end = text.indexOf('"', end + 1);
  }
  if (end === -1) return undefined;
  const value = text.slice(start, end);
  if (!value.includes('\\')) return value;
  try {
    return JSON.parse(`"${value}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * The text with lmgate's `"cost":<credits>` first in its one compact `usage` object. Undefined
 * (the caller parses) when its usage cannot be read off the text, or when the text already
 * names a cost (an upstream's own, OpenRouter's in dollars, is replaced by lmgate's).
 */
export function textWithUsageCost(text: string, costCreditsText: string): string | undefined {
  if (hasUnicodeEscape(text) || text.includes('cost"')) return undefined;
  const at = onlyKey(text, 'usage"');
  if (at === -1 || !text.startsWith(':{', at + 6)) return undefined;
  const inside = at + 8;
  const separator = text.charCodeAt(inside) === 125 /* } */ ? '' : ',';
  return `${text.slice(0, inside)}"cost":${costCreditsText}${separator}${text.slice(inside)}`;
}

/**
 * A key may be spelled with \u escapes (`"mod\u0065l"`): then neither "absent" nor "only
 * once" can be read off the text, and the parser decides. Encoders that escape every
 * non-ASCII character (Python's default) send such texts down the parsing path.
 */
function hasUnicodeEscape(text: string): boolean {
  return text.includes('\\u');
}

/** Where `key` (without its opening quote) is, when it occurs exactly once; else -1. */
function onlyKey(text: string, key: string): number {
  const at = text.indexOf(key);
  return at > 0 && text.charCodeAt(at - 1) === 34 /* " */ && !text.includes(key, at + key.length) ? at : -1;
}

/** A count member of the object opened at `from`: once in the text, before any nested object, a plain integer. */
function countAfter(text: string, from: number, key: string): number | undefined {
  const at = onlyKey(text, key);
  if (at < from || !text.startsWith(':', at + key.length)) return undefined;
  const between = text.slice(from, at);
  if (between.includes('{') || between.includes('}')) return undefined;
  return plainInteger(text, at + key.length + 1);
}

/** The JSON integer starting at `start`, followed by `,` or `}`; undefined for anything else. */
function plainInteger(text: string, start: number): number | undefined {
  let end = start;
  while (end < text.length && end - start <= 15) {
    const c = text.charCodeAt(end);
    if (c < 48 /* 0 */ || c > 57 /* 9 */) break;
    end++;
  }
  const next = text.charCodeAt(end);
  if (end === start || end - start > 15 || (next !== 44 /* , */ && next !== 125) /* } */) return undefined;
  if (text.charCodeAt(start) === 48 /* 0 */ && end - start > 1) return undefined; // not JSON
  return Number(text.slice(start, end));
}

/**
 * What an error body says: OpenAI's `error.message` (or the forms older llama.cpp and
 * FastAPI servers use: `{"error": "..."}`, `{"detail": "..."}`, `{"message": "..."}`), and
 * the error object's other plain fields (type, param, code, llama.cpp's n_prompt_tokens
 * and n_ctx), at most MAX_ERROR_FIELDS of them. Undefined when the body is not JSON or
 * says nothing.
 */
export function upstreamErrorOf(text: string): { message: string; fields: Record<string, string | number> } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined; // not JSON: the caller says something generic
  }
  if (!isRecord(parsed)) return undefined;
  const error = parsed.error;
  if (isRecord(error) && typeof error.message === 'string' && error.message.length > 0) return { message: error.message, fields: plainFields(error) };
  if (typeof error === 'string' && error.length > 0) return { message: error, fields: {} };
  if (typeof parsed.detail === 'string' && parsed.detail.length > 0) return { message: parsed.detail, fields: {} };
  if (typeof parsed.message === 'string' && parsed.message.length > 0) return { message: parsed.message, fields: plainFields(parsed) };
  return undefined;
}

const MAX_ERROR_FIELDS = 8;
const MAX_ERROR_FIELD_CHARS = 200;

/** An error object's short string and finite number members, but its message. */
function plainFields(error: Record<string, unknown>): Record<string, string | number> {
  const fields: Record<string, string | number> = {};
  let count = 0;
  for (const [name, value] of Object.entries(error)) {
    if (name === 'message' || count >= MAX_ERROR_FIELDS || name.length > 40) continue;
    if ((typeof value === 'string' && value.length <= MAX_ERROR_FIELD_CHARS) || (typeof value === 'number' && Number.isFinite(value))) {
      fields[name] = value;
      count++;
    }
  }
  return fields;
}

/**
 * The client's JSON text as an upstream's request, changed in place: `model` becomes the
 * upstream's name (the renamer's rule, the other way round), and `stream_options` asking
 * for usage goes in front when `askUsage`. Undefined when the text does not name lmgate's
 * model exactly once in the compact form: then the request is serialized instead.
 */
export function upstreamRequestText(text: string, modelId: string, upstreamModel: string, askUsage: boolean): string | undefined {
  const renamed = new ModelRenamer(upstreamModel, modelId).renameText(text);
  if (renamed === undefined || !askUsage) return renamed;
  const open = renamed.indexOf('{');
  return `${renamed.slice(0, open + 1)}"stream_options":{"include_usage":true},${renamed.slice(open + 1)}`;
}

/**
 * Shows an upstream's JSON text with lmgate's model id, without serializing the parsed
 * object again: the upstream's `"model":"<name>"` is replaced in place when it occurs
 * exactly once. A quote inside a JSON string is always escaped, so a match is a key, not
 * text; twice (a nested `model` key), spaced differently or missing, the object is
 * serialized instead.
 */
export class ModelRenamer {
  private readonly replacement: string;
  private upstreamModel = '';
  /** `model":"<name>"`: the key without its opening quote. */
  private needle = '';

  /** `modelId`: the name to show; `expectedModel`: the one the text usually names (for upstream answers, the name it was asked for). */
  constructor(
    private readonly modelId: string,
    expectedModel?: string,
  ) {
    this.replacement = `"model":${JSON.stringify(modelId)}`;
    if (expectedModel !== undefined) this.expect(expectedModel);
  }

  rename(text: string, parsed: Record<string, unknown>): string {
    const model = parsed.model;
    if (typeof model === 'string') {
      // An upstream may report another name than it was asked for (a dated snapshot):
      // the next chunks are looked for with that one.
      if (model !== this.upstreamModel) this.expect(model);
      const renamed = this.renameText(text);
      if (renamed !== undefined) return renamed;
    }
    return JSON.stringify({ ...parsed, model: this.modelId });
  }

  /** The text with lmgate's model id, when it names the expected model exactly once; else undefined. */
  renameText(text: string): string | undefined {
    // Looked for without its opening quote (see StreamRelay.plainChunk), then checked for it.
    const needle = this.needle;
    if (needle.length === 0) return undefined;
    const at = text.indexOf(needle, 1) - 1;
    if (at < 0 || text.charCodeAt(at) !== 34 /* " */ || text.includes(needle, at + needle.length + 1)) return undefined;
    // A key spelled with \u escapes after the match could be a later `model`, the one a
    // parser keeps; before it, it cannot override the match.
    if (text.includes('\\u', at)) return undefined;
    return text.slice(0, at) + this.replacement + text.slice(at + needle.length + 1);
  }

  private expect(model: string): void {
    this.upstreamModel = model;
    this.needle = `model":${JSON.stringify(model)}`;
  }
}
