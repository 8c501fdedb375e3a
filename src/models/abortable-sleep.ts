// A backend's pauses (pacing, retry backoff) end early when the client goes away.
import type { ClientLink } from './backend.js';

/** Waits, or stops waiting the moment the client goes (the timer is cleared). */
export function sleepMs(durationMs: number, client: ClientLink): Promise<void> {
  return new Promise((resolve) => {
    if (client.aborted) return resolve();
    const stopListening = client.onAbort(() => {
      clearTimeout(timer);
      resolve();
    });
    const timer = setTimeout(() => {
      stopListening();
      resolve();
    }, durationMs);
  });
}
