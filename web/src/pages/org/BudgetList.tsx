// The organisation's monthly budgets: its own, over everyone's spending, and each member's,
// with what was spent against it this month (UTC). A request that would pass a budget gets
// 402. Owners and admins set them; a member sees the organisation's and their own.
import { useState } from 'react';
import { creditsColumn } from '../../format';
import { may } from '../../org-permissions';
import { useSession } from '../../session';
import type { OrgBudget, OrgDetail } from '../../types';
import { BudgetDialog, type BudgetTarget } from './BudgetDialog';

export function BudgetList({ detail, onChange }: { detail: OrgDetail; onChange(detail: OrgDetail): void }) {
  const { account } = useSession();
  const edits = may(detail.org, 'budgets');
  const [editing, setEditing] = useState<BudgetTarget | null>(null);
  const budgetOf = (memberId: string | null): OrgBudget | undefined => detail.budgets.find((budget) => budget.memberId === memberId);
  const members = detail.members.filter((member) => may(detail.org, 'usage') || member.accountId === account?.id);
  const targets: BudgetTarget[] = [
    { memberId: null, label: 'Whole organisation', budget: budgetOf(null) },
    ...members.map((member) => ({ memberId: member.accountId, label: member.name ?? member.email, budget: budgetOf(member.accountId) })),
  ];
  const credits = creditsColumn(detail.budgets.flatMap((budget) => [budget.monthlyMicros, budget.spentMicros]));

  return (
    <section className="card flush" aria-labelledby="budgets-title">
      <div className="card-head">
        <h2 id="budgets-title" className="card-title">
          Monthly budgets
        </h2>
        <p className="muted">Credits each may spend in a calendar month (UTC) from the organisation’s balance; past it, requests get 402.</p>
      </div>
      <table className="table stacked" data-testid="org-budgets">
        <caption className="visually-hidden">Monthly budgets and what was spent this month</caption>
        <thead>
          <tr>
            <th scope="col">For</th>
            <th scope="col" className="num">
              Spent this month
            </th>
            <th scope="col" className="num">
              Monthly budget
            </th>
            <th scope="col">Used</th>
            <th scope="col" className="actions">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {targets.map((target) => (
            <tr key={target.memberId ?? 'org'}>
              <th scope="row" data-label="For">
                {target.label}
              </th>
              <td data-label="Spent this month" className="num">
                {target.budget === undefined ? <span className="muted">—</span> : credits(target.budget.spentMicros)}
              </td>
              <td data-label="Monthly budget" className="num">
                {target.budget === undefined ? <span className="muted">No budget</span> : credits(target.budget.monthlyMicros)}
              </td>
              <td data-label="Used">{target.budget === undefined ? <span className="muted">—</span> : <BudgetMeter budget={target.budget} />}</td>
              <td className="actions">
                {edits ? (
                  <button type="button" className="button small" aria-label={`Set the budget of ${target.label}`} onClick={() => setEditing(target)}>
                    {target.budget === undefined ? 'Set budget' : 'Change'}
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <BudgetDialog
        target={editing}
        onClose={() => setEditing(null)}
        onSaved={(next) => {
          setEditing(null);
          onChange(next);
        }}
      />
    </section>
  );
}

function BudgetMeter({ budget }: { budget: OrgBudget }) {
  const percent = Math.min(100, Math.floor((budget.spentMicros / budget.monthlyMicros) * 100));
  return (
    <span className="budget-used">
      <meter className="budget-meter" min={0} max={budget.monthlyMicros} low={budget.monthlyMicros * 0.75} high={budget.monthlyMicros * 0.9} optimum={0} value={budget.spentMicros} />
      <span className="budget-percent">{percent} %</span>
    </span>
  );
}
