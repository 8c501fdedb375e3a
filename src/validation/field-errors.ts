// The 422 `errors` map of a body checked against a schema, built up field by field: each
// field named by its dotted path (`messages.2.content`), in the order found, and bounded,
// so that a body broken everywhere costs no more to report than one broken in 50 places.
import { ValidationError } from '../errors.js';

/** A request broken in more places than this gets the first ones reported. */
const MAX_REPORTED_FIELDS = 50;
const MAX_MESSAGES_PER_FIELD = 3;

export class FieldErrors {
  private readonly fields = new Map<string, string[]>();

  get size(): number {
    return this.fields.size;
  }

  /** Nothing more will be reported: checks still to come may be skipped. */
  get isFull(): boolean {
    return this.fields.size >= MAX_REPORTED_FIELDS;
  }

  has(path: string): boolean {
    return this.fields.has(path);
  }

  add(path: string, message: string): void {
    const messages = this.fields.get(path);
    if (messages === undefined) {
      if (!this.isFull) this.fields.set(path, [message]);
    } else if (messages.length < MAX_MESSAGES_PER_FIELD && !messages.includes(message)) {
      messages.push(message);
    }
  }

  /** Throws the 422 when any field was refused. */
  check(): void {
    // fromEntries defines own properties, so a path such as "__proto__" stays a key.
    if (this.fields.size > 0) throw new ValidationError(Object.fromEntries(this.fields));
  }
}

/** `/messages/0/content` (an Ajv error's JSON Pointer) → `messages.0.content`. */
export function dottedPath(instancePath: string): string {
  if (instancePath === '') return '';
  return instancePath
    .slice(1)
    .split('/')
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

export function joinPath(base: string, child: string): string {
  if (base === '') return child;
  return child === '' ? base : `${base}.${child}`;
}
