// Server-sent events from an upstream, split into the data of each event as the bytes
// arrive.
import { StringDecoder } from 'node:string_decoder';
import { AttemptFailure } from '../../errors.js';

/** Longest event lmgate holds in memory before giving up on an upstream. */
const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Splits a server-sent-events byte stream into the data of each event, as it arrives:
 * lines may end in LF or CRLF, an event ends at a blank line, comments (`: ping`) and
 * other fields are skipped, and a line cut between two reads waits for its end.
 */
export class SseDataReader {
  // StringDecoder, not TextDecoder: the same care for characters cut between reads, at a
  // fraction of the cost per read.
  private readonly decoder = new StringDecoder('utf8');
  /** The unfinished last line, in pieces (joined once its end arrives: no quadratic copy). */
  private tail: string[] = [];
  private tailChars = 0;
  /** The data lines of the event being read, or null before its first. */
  private data: string | null = null;

  constructor(private readonly where: string) {}

  push(bytes: Uint8Array): string[] {
    return this.take(this.decoder.write(bytes), false);
  }

  end(): string[] {
    return this.take(this.decoder.end(), true);
  }

  private take(text: string, isEnd: boolean): string[] {
    const events: string[] = [];
    if (text.indexOf('\n') === -1 && !isEnd) {
      if (text.length > 0) {
        this.tail.push(text);
        this.tailChars += text.length;
        if (this.tailChars > MAX_EVENT_CHARS) throw new AttemptFailure('bad_answer', 'upstream event too large', this.where);
      }
      return events;
    }
    const buffer = this.tail.length > 0 ? this.tail.join('') + text : text;
    this.tail = [];
    this.tailChars = 0;
    let start = 0;
    for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n', start)) {
      this.line(buffer, start, newline, events);
      start = newline + 1;
    }
    if (isEnd) {
      if (start < buffer.length) this.line(buffer, start, buffer.length, events);
      this.dispatch(events); // a stream may end without the last blank line
    } else if (start < buffer.length) {
      this.tail.push(buffer.slice(start));
      this.tailChars = buffer.length - start;
    }
    return events;
  }

  /** A blank line: the event read so far is complete. */
  private dispatch(events: string[]): void {
    if (this.data !== null) events.push(this.data);
    this.data = null;
  }

  private line(buffer: string, start: number, end: number, events: string[]): void {
    if (end > start && buffer.charCodeAt(end - 1) === 13 /* \r */) end--;
    if (end === start) return this.dispatch(events);
    if (buffer.charCodeAt(start) === 58 /* : */) return; // a comment, e.g. a keep-alive
    if (!buffer.startsWith('data:', start)) return; // event:, id:, retry: carry nothing here
    let valueAt = start + 5;
    if (buffer.charCodeAt(valueAt) === 32 /* space */) valueAt++;
    const value = buffer.slice(valueAt, end);
    this.data = this.data === null ? value : `${this.data}\n${value}`;
    if (this.data.length > MAX_EVENT_CHARS) throw new AttemptFailure('bad_answer', 'upstream event too large', this.where);
  }
}
