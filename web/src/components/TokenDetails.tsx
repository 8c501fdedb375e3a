// What a usage record's totals leave out, on a small line beneath them: the parts priced
// apart (cached input, cache writes, reasoning), whether lmgate counted the tokens because
// the model server reported none, how an answer that did not complete ended, and what an
// account that ran out could not pay. Nothing at all for a plain, completed answer.
import { formatCredits, formatNumber } from '../format';
import type { TokenKinds, UsageOutcome } from '../types';

const OUTCOMES: Record<Exclude<UsageOutcome, 'completed'>, string> = {
  client_gone: 'cut short: the client left',
  upstream_failed: 'cut short: the model server failed',
  drained: 'cut short: lmgate restarted',
};

export function TokenDetails({ cachedTokens, cacheWriteTokens, reasoningTokens, basis, outcome, shortfallMicros }: TokenKinds) {
  const parts: string[] = [];
  if (cachedTokens > 0) parts.push(`${formatNumber(cachedTokens)} cached`);
  if (cacheWriteTokens > 0) parts.push(`${formatNumber(cacheWriteTokens)} cache writes`);
  if (reasoningTokens > 0) parts.push(`${formatNumber(reasoningTokens)} reasoning`);
  if (basis === 'counted') parts.push('counted by lmgate');
  if (outcome !== null && outcome !== 'completed') parts.push(OUTCOMES[outcome]);
  if (shortfallMicros > 0) parts.push(`${formatCredits(shortfallMicros)} unpaid`);
  if (parts.length === 0) return null;
  return <div className="muted token-details">{parts.join(' · ')}</div>;
}
