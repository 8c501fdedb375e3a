// Asks the server again every second until it has an answer, for up to a minute: what a
// page does while it waits for something the server learns later (Stripe's webhook).
import { useEffect, useRef, useState } from 'react';

export interface Poll<T> {
  result: T | undefined;
  /** No answer within the time allowed; the page says it is still under way. */
  timedOut: boolean;
}

/** `check` answers undefined while there is nothing yet; a new `key` starts over. */
export function usePoll<T>(key: string, check: () => Promise<T | undefined>, intervalMs = 1000, timeoutMs = 60_000): Poll<T> {
  const [poll, setPoll] = useState<Poll<T>>({ result: undefined, timedOut: false });
  const checkRef = useRef(check);
  checkRef.current = check;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = Date.now() + timeoutMs;
    setPoll({ result: undefined, timedOut: false });

    async function attempt() {
      // A failed request is one more reason to ask again, not an answer.
      const result = await checkRef.current().catch(() => undefined);
      if (stopped) return;
      if (result !== undefined) setPoll({ result, timedOut: false });
      else if (Date.now() >= deadline) setPoll({ result: undefined, timedOut: true });
      else timer = setTimeout(() => void attempt(), intervalMs);
    }
    void attempt();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, intervalMs, timeoutMs]);

  return poll;
}
