// A backend call's ClientLink driven by an AbortController, as a test's client.
import type { ClientLink } from '../../src/models/backend.js';

export function clientLinkOf(signal: AbortSignal = new AbortController().signal): ClientLink {
  return {
    get aborted() {
      return signal.aborted;
    },
    onAbort(listener) {
      if (signal.aborted) {
        listener();
        return () => {};
      }
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}
