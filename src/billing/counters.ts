// Decisions as data. A request is admitted against an ordered list of counters: tokens per
// minute, the account's credit, the key's credit limit (and a new limit is one more entry).
// Each is taken in order; the first that refuses decides the answer, and what the ones before
// it took is given back, so a refusal takes nothing. Settlement runs the same list: the
// account's counter decides what is charged (record.shortfallMicros), the ones after it
// count that charge. Shared mode runs the same list as rows of one Lua script
// (shared/counter-rows.ts, shared/counter-scripts.ts).
import type { MaybePromise } from '../maybe-promise.js';
import type { Settlement } from './admission.js';

export interface Counter {
  /** Reads what the counter needs the first time (from the store); nothing once loaded. */
  load(): MaybePromise<void>;
  /** Takes the request's share, or throws the counter's refusal (429, 402) having taken nothing. */
  take(): void;
  /** The request was refused after this counter took its share: give it back. */
  giveBack(): void;
  /** The request is done: its hold released and its usage counted. */
  settle(settlement: Settlement): void;
}

/** Every counter taken, in order, or none: the first refusal is thrown. */
export function admitAll(counters: readonly Counter[]): MaybePromise<void> {
  let loading: Promise<void>[] | undefined;
  for (const counter of counters) {
    const loaded = counter.load();
    if (loaded instanceof Promise) (loading ??= []).push(loaded);
  }
  return loading === undefined ? takeAll(counters) : Promise.all(loading).then(() => takeAll(counters));
}

function takeAll(counters: readonly Counter[]): void {
  let taken = 0;
  try {
    for (; taken < counters.length; taken++) counters[taken]!.take();
  } catch (err) {
    while (taken-- > 0) counters[taken]!.giveBack();
    throw err;
  }
}

/** Settles every counter in order: each after the one whose charge it counts. */
export function settleAll(counters: readonly Counter[], settlement: Settlement): void {
  for (const counter of counters) counter.settle(settlement);
}
