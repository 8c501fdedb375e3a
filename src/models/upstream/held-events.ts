// Events relayed to the client but not yet read for the text they carry. Most upstreams
// report usage at the end of a stream, so an event is read for its text (to count what was
// generated) only if that never comes; past a bound, events are read as they come, so no
// more than that is held.
import { parsedOrNull } from './wire.js';

const MAX_HELD_CHARS = 1024 * 1024;

export class HeldEvents {
  private held: string[] = [];
  private heldChars = 0;

  /** `read`: takes the text of one event's JSON (a well-framed event that is not JSON carries none). */
  constructor(private readonly read: (event: Record<string, unknown>) => void) {}

  hold(data: string): void {
    this.held.push(data);
    this.heldChars += data.length;
    if (this.heldChars > MAX_HELD_CHARS) this.readAll();
  }

  /** The upstream's count came: nothing held needs reading. */
  drop(): void {
    this.held = [];
    this.heldChars = 0;
  }

  readAll(): void {
    for (const data of this.held) {
      const event = parsedOrNull(data);
      if (event !== null) this.read(event);
    }
    this.drop();
  }
}
