// What a usage record says of its numbers and of its answer, beside the tokens.
/** Where the numbers came from: the upstream's report, or lmgate's own count. */
export type UsageBasis = 'reported' | 'counted';

/** How an answer ended: whole, cut short by the client leaving, by the upstream failing, or by the server's drain. */
export type UsageOutcome = 'completed' | 'client_gone' | 'upstream_failed' | 'drained';
