import { formatNumber } from '../format';
import type { Plan } from '../types';

/** A plan's rate limits as a definition list. */
export function PlanLimits({ plan }: { plan: Plan }) {
  return (
    <dl className="limits">
      <div>
        <dt>Requests per minute</dt>
        <dd>{formatNumber(plan.rpm)}</dd>
      </div>
      <div>
        <dt>Tokens per minute</dt>
        <dd>{formatNumber(plan.tpm)}</dd>
      </div>
      <div>
        <dt>Concurrent requests</dt>
        <dd>{formatNumber(plan.concurrency)}</dd>
      </div>
    </dl>
  );
}
