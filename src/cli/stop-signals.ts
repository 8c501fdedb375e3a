// SIGTERM and SIGINT over a server's life. While it starts, a signal ends the process at
// once: nothing is served yet, and a start can wait without end on a database or Redis that
// does not answer, or on a migration lock. Once it listens, the first signal starts the
// drain; later ones are ignored rather than left to kill it mid-drain (Ctrl-C reaches a
// supervisor and its workers together, and the supervisor then passes SIGTERM on).
import { constants } from 'node:os';
import type { CliIo } from './context.js';

export interface StopSignals {
  /** Resolves at the first signal after `listening()`. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** From now on a signal drains instead of ending the process. */
  listening(): void;
  /** Runs (synchronously) just before a signal ends a start: a supervisor stops its workers. */
  onAbort(fn: () => void): void;
  dispose(): void;
}

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

export function watchStopSignals(io: CliIo): StopSignals {
  let isListening = false;
  let signalled = false;
  let aborts: Array<() => void> = [];
  let resolveStopped: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((resolve) => (resolveStopped = resolve));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!isListening) {
      for (const abort of aborts) abort();
      io.err(`lmgate: stopped by ${signal} while starting`);
      // The shell's convention for a process ended by a signal: 128 + its number.
      process.exit(128 + constants.signals[signal]);
    }
    if (signalled) return;
    signalled = true;
    resolveStopped(signal);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    stopped,
    listening: () => {
      isListening = true;
    },
    onAbort: (fn) => aborts.push(fn),
    dispose: () => {
      aborts = [];
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
