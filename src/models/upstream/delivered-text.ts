// The text a stream delivered, kept for counting its tokens should the upstream report no
// usage (most report it at the end, and then this is never read). Only the text is kept,
// not the events it came in: a long answer's events are ten times its text, and a server
// holds many streams at once.
import { countTextTokens } from '../tokens.js';

/** Pieces are joined into one string this often, so none holds on to the event it was cut from. */
const PIECES_PER_JOIN = 64;

export class DeliveredText {
  private joined = '';
  private pieces: string[] = [];

  add(text: string): void {
    if (text.length === 0) return;
    this.pieces.push(text);
    if (this.pieces.length >= PIECES_PER_JOIN) this.join();
  }

  get text(): string {
    this.join();
    return this.joined;
  }

  tokens(): number {
    return countTextTokens(this.text);
  }

  /** The upstream's count came: nothing needs counting. */
  drop(): void {
    this.joined = '';
    this.pieces = [];
  }

  private join(): void {
    if (this.pieces.length === 0) return;
    // A new flat string of the pieces, appended without copying what came before.
    this.joined += this.pieces.join('');
    this.pieces = [];
  }
}
