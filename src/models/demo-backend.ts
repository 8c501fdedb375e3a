// The built-in demo models, so lmgate answers out of the box with no upstream:
//   echo  - repeats the last user message, token by token, as fast as possible. It is the
//           model the load benchmark measures, so its per-token work is kept minimal.
//   lorem - English-looking filler at a human-visible pace, so the dashboard, streaming
//           clients and metering can be watched working as with a real model.
// Both speak OpenAI's wire format exactly and honour n, stop and the output ceiling.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { LoremWriter, createRandom, mixSeed } from './lorem-text.js';
import {
  stopSequences,
  textOfContent,
  type ChatRequest,
} from '../chat/chat-request.js';
import { andThen, type MaybePromise } from '../maybe-promise.js';
import { ClientGoneError } from '../errors.js';
import type { Usage } from '../billing/usage.js';
import type { BackendCall, ChatBackend, ChunkSink, CompletionResult, StreamResult } from './backend.js';
import { sleepMs } from './abortable-sleep.js';
import { ChunkWriter, completionJson, newCompletionId, unixSecNow, type FinishReason } from './openai-body.js';
import { splitIntoTokens, splitIntoTokensBySegment } from './tokens.js';

export interface DemoBackendOptions {
  kind: 'echo' | 'lorem';
  /** lorem only: tokens per second for each choice; 0 = as fast as possible. */
  tokensPerSec?: number;
  /** lorem only: answer length in tokens when the client sets no max tokens. */
  defaultTokens?: number;
}

const DEFAULT_TOKENS_PER_SEC = 80;
const DEFAULT_LOREM_TOKENS = 200;
// Unpaced generation runs synchronously; handing the event loop back now and then lets
// a disconnect (and every other request) be noticed during a very long answer.
const YIELD_EVERY_TOKENS = 1024;

export function createDemoBackend(options: DemoBackendOptions): ChatBackend {
  const tokensPerSec = options.kind === 'lorem' ? (options.tokensPerSec ?? DEFAULT_TOKENS_PER_SEC) : 0;
  const intervalMs = tokensPerSec > 0 ? 1000 / tokensPerSec : 0;
  const defaultTokens = options.defaultTokens ?? DEFAULT_LOREM_TOKENS;

  function startChoices(call: BackendCall): ChoiceRun[] {
    const request = call.request;
    const choiceCount = Math.max(1, request.n ?? 1);
    const stops = stopSequences(request);
    const runs: ChoiceRun[] = [];
    if (options.kind === 'echo') {
      const tokens = new EchoTokens(lastUserText(request));
      for (let index = 0; index < choiceCount; index++) {
        runs.push(new ChoiceRun(index, new EchoSource(tokens), stops, call.maxOutputTokens));
      }
    } else {
      // The answer is defaultTokens long; a lower max tokens cuts it (finish_reason "length").
      const answerTokens = defaultTokens;
      const baseSeed = request.seed ?? Math.floor(Math.random() * 0x1_0000_0000);
      for (let index = 0; index < choiceCount; index++) {
        const random = createRandom(mixSeed(baseSeed, index));
        runs.push(new ChoiceRun(index, new LoremSource(random, answerTokens), stops, call.maxOutputTokens));
      }
    }
    return runs;
  }

  function complete(call: BackendCall): CompletionResult | Promise<CompletionResult> {
    const runs = startChoices(call);
    return andThen(writeAnswers(runs, call), (contents) => {
      const result = (): CompletionResult => {
        const usage = usageOf(call, runs);
        return { body: completionJson(call.modelId, runs, contents, usage, call.chargeMicros(usage)), usage, finishReason: runs[0]?.finishReason ?? null };
      };
      if (intervalMs === 0) return result();
      // A real model takes as long to answer whole as it would to stream the answer.
      let longestTokens = 0;
      for (const run of runs) longestTokens = Math.max(longestTokens, run.tokens);
      if (call.client.aborted) throw new ClientGoneError();
      return sleepMs(longestTokens * intervalMs, call.client).then(() => {
        if (call.client.aborted) throw new ClientGoneError();
        return result();
      });
    });
  }

  async function stream(call: BackendCall, sink: ChunkSink): Promise<StreamResult> {
    const { client } = call;
    const runs = startChoices(call);
    const result = (): StreamResult => ({ usage: usageOf(call, runs), finishReason: runs[0]?.finishReason ?? null });
    if (client.aborted) return result();
    const chunks = new ChunkWriter(newCompletionId(), unixSecNow(), call.modelId, call.includeUsage);
    // Waits out a full socket; false when the client left meanwhile. Only a refused send
    // awaits, so a fast stream costs no promise per chunk.
    const drained = async (): Promise<boolean> => {
      await sink.drained();
      return !client.aborted;
    };
    let activeChoices = runs.length;
    /** Sends the choice's finish chunk once it has a finish reason. */
    const reportFinish = async (run: ChoiceRun): Promise<boolean> => {
      run.isReported = true;
      activeChoices--;
      return sink.send(chunks.finish(run.index, run.finishReason!, run.stopSequence)) || drained();
    };

    for (const run of runs) {
      if (!sink.send(chunks.role(run.index)) && !(await drained())) return result();
    }
    // Choices with nothing to say (empty echo) end before the first token.
    for (const run of runs) {
      if (run.finishReason !== null && !(await reportFinish(run))) return result();
    }

    let nextTokenAtMs = performance.now();
    let ticks = 0;
    while (activeChoices > 0) {
      if (intervalMs > 0) {
        // Pace against a running deadline, not a fixed delay, so timer lateness does
        // not add up; after a stall (slow client) start counting afresh.
        nextTokenAtMs += intervalMs;
        const delayMs = nextTokenAtMs - performance.now();
        if (delayMs > 0) await sleepMs(delayMs, client);
        else nextTokenAtMs = performance.now();
      } else if (++ticks % YIELD_EVERY_TOKENS === 0) {
        await yieldToEventLoop();
      }
      if (client.aborted) return result();

      for (const run of runs) {
        if (run.isReported) continue;
        const text = run.step();
        if (text.length > 0 && !sink.send(chunks.content(run.index, text)) && !(await drained())) return result();
        if (run.finishReason !== null && !(await reportFinish(run))) return result();
      }
    }

    const usage = usageOf(call, runs);
    if (call.includeUsage) sink.send(chunks.usage(usage, call.chargeMicros(usage)));
    return { usage, finishReason: runs[0]?.finishReason ?? null };
  }

  return { complete, stream };
}

/**
 * Every choice's whole answer. A short one is written at once; a long one (128 choices of
 * a long echo) in slices of YIELD_EVERY_TOKENS tokens that hand the event loop back in
 * between, as a stream does. The client is looked at only then.
 */
function writeAnswers(runs: readonly ChoiceRun[], call: BackendCall): MaybePromise<string[]> {
  const contents = runs.map(() => '');
  let budget = 0;
  const writeSlice = (): boolean => {
    budget = YIELD_EVERY_TOKENS;
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i]!;
      // Joined once per slice: a string grown token by token is a deep rope, costly to
      // flatten and to collect when the answer is long.
      const pieces: string[] = [];
      let isDone = true;
      while (run.finishReason === null) {
        if (budget-- === 0) {
          isDone = false;
          break;
        }
        pieces.push(run.step());
      }
      contents[i] += pieces.join('');
      if (!isDone) return false;
    }
    return true;
  };
  if (writeSlice()) return contents;
  return (async () => {
    do {
      await yieldToEventLoop();
      if (call.client.aborted) throw new ClientGoneError();
    } while (!writeSlice());
    return contents;
  })();
}

// ---------------------------------------------------------------------------------------
// One choice: pulls tokens from its source, cuts at stop sequences and at the ceiling.

/** Where a choice's tokens come from: one string per token (see splitIntoTokens). */
interface TokenSource {
  hasNext(): boolean;
  /** Only called while hasNext() is true. */
  next(): string;
}

class ChoiceRun {
  /** Tokens generated so far, including any that were cut off by a stop sequence. */
  tokens = 0;
  finishReason: FinishReason | null = null;
  /** The stop sequence that ended the choice, if one did. */
  stopSequence: string | null = null;
  /** The stream has sent this choice's finish chunk. */
  isReported = false;
  /** Text that could still turn out to be the start of a stop sequence. */
  private heldText = '';

  constructor(
    readonly index: number,
    private readonly source: TokenSource,
    private readonly stops: readonly string[],
    private readonly maxTokens: number,
  ) {
    this.finishIfOver();
  }

  /**
   * Generates one token and returns the text that may be shown now: '' while it is held
   * back or not yet a whole character; never anything from a stop sequence onwards.
   * Sets finishReason when the choice has ended with this token.
   */
  step(): string {
    const piece = this.source.next();
    this.tokens++;
    if (this.stops.length === 0) return piece + this.finishIfOver();

    const pending = this.heldText + piece;
    // Everything emitted before was checked to be no stop-sequence prefix, so a match can
    // only start inside the pending text.
    const [stopAt, stop] = firstStop(pending, this.stops);
    if (stop !== null) {
      this.finishReason = 'stop';
      this.stopSequence = stop;
      this.heldText = '';
      return pending.slice(0, stopAt);
    }
    const heldLength = longestStopPrefixAtEnd(pending, this.stops);
    this.heldText = heldLength === 0 ? '' : pending.slice(pending.length - heldLength);
    const shown = heldLength === 0 ? pending : pending.slice(0, pending.length - heldLength);
    return shown + this.finishIfOver();
  }

  /** Ends the choice if its answer is complete or the ceiling is reached; releases held text. */
  private finishIfOver(): string {
    if (!this.source.hasNext()) this.finishReason = 'stop';
    else if (this.tokens >= this.maxTokens) this.finishReason = 'length';
    else return '';
    const released = this.heldText;
    this.heldText = '';
    return released;
  }
}

/** Where the first stop sequence in `text` starts, and which it is; [-1, null] for none. */
function firstStop(text: string, stops: readonly string[]): [number, string | null] {
  let first = -1;
  let found: string | null = null;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (first < 0 || at < first)) {
      first = at;
      found = stop;
    }
  }
  return [first, found];
}

/** Length of the longest end of `text` that some stop sequence starts with (but is not). */
function longestStopPrefixAtEnd(text: string, stops: readonly string[]): number {
  let longest = 0;
  for (const stop of stops) {
    for (let length = Math.min(stop.length - 1, text.length); length > longest; length--) {
      if (endsWithStartOf(text, stop, length)) {
        longest = length;
        break;
      }
    }
  }
  return longest;
}

function endsWithStartOf(text: string, stop: string, length: number): boolean {
  const offset = text.length - length;
  for (let i = 0; i < length; i++) {
    if (text.charCodeAt(offset + i) !== stop.charCodeAt(i)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// echo

class EchoSource implements TokenSource {
  private at = 0;
  constructor(private readonly tokens: EchoTokens) {}
  hasNext(): boolean {
    return this.tokens.has(this.at);
  }
  next(): string {
    return this.tokens.get(this.at++);
  }
}

/**
 * The last user message's tokens, split only as far as a choice has read: the answer
 * stops at the output ceiling, so a long prompt is never tokenized whole for it.
 */
class EchoTokens {
  private readonly pieces: string[] = [];
  private readonly segments: Iterator<string[], void>;

  constructor(text: string) {
    this.segments = splitIntoTokensBySegment(text);
  }

  has(index: number): boolean {
    while (index >= this.pieces.length) {
      const next = this.segments.next();
      if (next.done === true) return false;
      for (const piece of next.value) this.pieces.push(piece);
    }
    return true;
  }

  /** Only after has(index) was true. */
  get(index: number): string {
    return this.pieces[index] as string;
  }
}

function lastUserText(request: ChatRequest): string {
  const messages = request.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return textOfContent(message.content);
  }
  return '';
}

// ---------------------------------------------------------------------------------------
// lorem: sentences from a small grammar, tokenized one sentence at a time so a long
// answer is never built ahead of what the client reads.

class LoremSource implements TokenSource {
  private pieces: string[] = [];
  private at = 0;
  private produced = 0;
  private readonly writer: LoremWriter;

  constructor(
    random: () => number,
    private readonly answerTokens: number,
  ) {
    this.writer = new LoremWriter(random);
  }

  hasNext(): boolean {
    return this.produced < this.answerTokens;
  }

  next(): string {
    while (this.at >= this.pieces.length) {
      this.pieces = splitIntoTokens(this.writer.nextSegment());
      this.at = 0;
    }
    this.produced++;
    return this.pieces[this.at++] as string;
  }
}

function usageOf(call: BackendCall, runs: readonly ChoiceRun[]): Usage {
  let completionTokens = 0;
  for (const run of runs) completionTokens += run.tokens;
  return { promptTokens: call.promptTokens, completionTokens };
}
