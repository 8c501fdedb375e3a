// The mail of an alert: who gets it (an organisation's owners and billing members, or a
// person's own address; never an organisation's placeholder address) and what it says.
import type { Mailer, MailMessage } from '../mail/mailer.js';
import { formatCredits } from '../money.js';
import type { OrgMember } from '../store/org-store.js';
import type { Account } from '../store/store.js';
import type { BalanceLowData, BudgetThresholdData } from '../webhooks/events.js';

/** One alert as it was claimed. */
export type Alert = { type: 'balance.low'; data: BalanceLowData } | { type: 'budget.threshold'; data: BudgetThresholdData; period: string };

/** An organisation's own address is a placeholder (store/orgs.ts): mail must never go there. */
const PLACEHOLDER_DOMAIN = '@org.invalid';

/** Who is told of an organisation's alerts: the roles that pay for it. */
const ALERTED_ROLES = new Set(['owner', 'billing']);

export function alertRecipients(account: Account, members: readonly OrgMember[]): string[] {
  const addresses = account.kind === 'org' ? members.filter((member) => ALERTED_ROLES.has(member.role)).map((member) => member.email) : [account.email];
  return [...new Set(addresses)].filter((address) => !address.toLowerCase().endsWith(PLACEHOLDER_DOMAIN));
}

export function alertMessage(to: string, account: Account, alert: Alert, members: readonly OrgMember[]): MailMessage {
  const name = account.kind === 'org' ? (account.name ?? account.id) : 'your account';
  if (alert.type === 'balance.low') {
    const { balance_micros, threshold_micros } = alert.data;
    return {
      to,
      subject: `lmgate: the balance of ${name} is below ${formatCredits(threshold_micros)} credits`,
      text: [
        `The balance of ${name} is ${formatCredits(balance_micros)} credits, below the alert threshold of ${formatCredits(threshold_micros)} credits.`,
        'Requests are refused once nothing is left: top up to keep them going.',
        '',
        'This alert is sent once; it is armed again when the balance is back at or above the threshold.',
      ].join('\n'),
    };
  }
  const { member_id, limit_micros, spent_micros, threshold_percent } = alert.data;
  const whose = member_id === null ? `the monthly budget of ${name}` : `the monthly budget of ${members.find((member) => member.accountId === member_id)?.email ?? member_id} in ${name}`;
  return {
    to,
    subject: `lmgate: ${threshold_percent} % of ${whose} used`,
    text: [
      `${formatCredits(spent_micros)} of ${formatCredits(limit_micros)} credits of ${whose} are spent in ${alert.period} (UTC): ${threshold_percent} % or more.`,
      threshold_percent >= 100 ? 'Requests that would pass the budget are refused until next month or until the budget is raised.' : 'Requests that would pass the budget will be refused.',
      '',
      'Each threshold alerts once a month; raising the budget arms them again.',
    ].join('\n'),
  };
}

/** Sends each alert to each recipient, one by one; a failure is reported and the rest still sent. */
export async function mailAlerts(mailer: Mailer, account: Account, members: readonly OrgMember[], alerts: readonly Alert[], onFailure: (err: unknown, alert: Alert) => void): Promise<void> {
  for (const alert of alerts) {
    for (const to of alertRecipients(account, members)) {
      try {
        await mailer.send(alertMessage(to, account, alert, members));
      } catch (err) {
        onFailure(err, alert);
      }
    }
  }
}
