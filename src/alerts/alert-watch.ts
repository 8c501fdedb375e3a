// Alerts on a balance and on budgets, checked after usage is written to the store, never
// on a request's path: each committed usage batch names the accounts (and the members)
// it charged, and each is checked from the store (its balance, each budget's spending this
// month) once at a time, a batch meanwhile asking for one more check after it. The store's
// conditional claims (commands/alerts.ts), not this process's memory, decide which
// instance sends an alert: its webhook event commits with the claim, its mail goes after.
import type { AlertCommands } from '../commands/alerts.js';
import type { Mailer } from '../mail/mailer.js';
import type { BudgetAlertMark } from '../store/alert-store.js';
import type { OrgBudget } from '../store/org-store.js';
import type { Store, UsageRecord } from '../store/store.js';
import { mailAlerts, type Alert } from './alert-mail.js';
import { hasReached, monthOf } from './thresholds.js';

export type AlertWatchStore = Pick<Store, 'findAccount' | 'findAlertSettings' | 'listBudgets' | 'listBudgetAlerts' | 'listMembers' | 'balanceOf' | 'spendOf'>;

export interface AlertWatchOptions {
  /** Milliseconds since the epoch: which month a budget's spending is counted in. */
  now?: () => number;
  onError: (err: unknown, accountId: string) => void;
  /** An alert's mail could not be sent (it is not retried: the webhook is the record). */
  onMailError: (err: unknown, accountId: string, alert: Alert) => void;
}

/**
 * How long an account with nothing to watch (no balance threshold, no budget) is not read
 * again: most accounts have none, and each batch would otherwise cost their reads. Saved
 * settings and budgets record an account change, which every instance applies (`forget`)
 * at once; this bounds a change missed all the same.
 */
const QUIET_TTL_MS = 30_000;

export class AlertWatch {
  private readonly running = new Map<string, Promise<void>>();
  /** Per account, the members whose spending asks for one more check after the running one. */
  private readonly again = new Map<string, Set<string>>();
  private readonly quietUntil = new Map<string, number>();
  private readonly mailing = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(
    private readonly store: AlertWatchStore,
    private readonly commands: AlertCommands,
    private readonly mailer: Mailer | undefined,
    private readonly options: AlertWatchOptions,
  ) {
    // Read at each call, not captured: a test that moves the clock moves this one too.
    this.now = options.now ?? (() => Date.now());
  }

  /** A usage batch committed: check the accounts it charged soon. Returns at once. */
  usageStored(records: readonly UsageRecord[]): void {
    const members = new Map<string, Set<string>>();
    for (const record of records) {
      const set = members.get(record.accountId) ?? new Set<string>();
      if (record.memberId !== null) set.add(record.memberId);
      members.set(record.accountId, set);
    }
    for (const [accountId, memberIds] of members) this.checkSoon(accountId, memberIds);
  }

  /** The account changed (its alert settings, its budgets), here or elsewhere: read them at its next check. */
  forget(accountId: string): void {
    this.quietUntil.delete(accountId);
  }

  /** Resolves once no check runs and no mail is being sent (tests, and a clean shutdown). */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.mailing.size > 0) await Promise.all([...this.running.values(), ...this.mailing]);
  }

  private checkSoon(accountId: string, memberIds: Set<string>): void {
    if (this.running.has(accountId)) {
      const waiting = this.again.get(accountId) ?? new Set<string>();
      for (const id of memberIds) waiting.add(id);
      this.again.set(accountId, waiting);
      return;
    }
    const check = this.check(accountId, memberIds)
      .catch((err: unknown) => this.options.onError(err, accountId))
      .finally(() => {
        this.running.delete(accountId);
        const waiting = this.again.get(accountId);
        if (waiting) {
          this.again.delete(accountId);
          this.checkSoon(accountId, waiting);
        }
      });
    this.running.set(accountId, check);
  }

  private async check(accountId: string, memberIds: ReadonlySet<string>): Promise<void> {
    if ((this.quietUntil.get(accountId) ?? 0) > performance.now()) return;
    const [settings, budgets] = await Promise.all([this.store.findAlertSettings(accountId), this.store.listBudgets(accountId)]);
    if (settings.balanceBelowMicros === null && budgets.length === 0) {
      this.quietUntil.set(accountId, performance.now() + QUIET_TTL_MS);
      return;
    }
    const now = new Date(this.now());
    const alerts: Alert[] = [];
    // The stored balance, read first so an armed alert above its threshold costs no write.
    if (settings.balanceBelowMicros !== null && settings.balanceArmed && (await this.store.balanceOf(accountId)) < settings.balanceBelowMicros) {
      const data = await this.commands.claimBalanceLow(accountId, now);
      if (data) alerts.push({ type: 'balance.low', data });
    }
    const watched = budgets.filter((budget) => budget.memberId === null || memberIds.has(budget.memberId));
    if (watched.length > 0) alerts.push(...(await this.checkBudgets(accountId, watched, settings.budgetThresholds, now)));
    if (alerts.length > 0 && this.mailer) this.mail(this.mailer, accountId, alerts);
  }

  private async checkBudgets(accountId: string, budgets: readonly OrgBudget[], thresholds: readonly number[], now: Date): Promise<Alert[]> {
    const period = monthOf(now.getTime());
    const marks = await this.store.listBudgetAlerts(accountId);
    const alerts: Alert[] = [];
    for (const budget of budgets) {
      const due = thresholds.filter((percent) => !isAlerted(marks, budget, percent, period));
      if (due.length === 0) continue;
      const scope = budget.memberId === null ? { accountId } : { accountId, memberId: budget.memberId };
      const spentMicros = await this.store.spendOf(scope, `${period}-01T00:00:00.000Z`);
      for (const percent of due) {
        if (!hasReached(spentMicros, budget.monthlyMicros, percent)) break;
        const mark: BudgetAlertMark = { memberId: budget.memberId, thresholdPercent: percent, period, budgetMicros: budget.monthlyMicros };
        const data = await this.commands.claimBudgetThreshold(accountId, mark, spentMicros, now);
        if (data) alerts.push({ type: 'budget.threshold', data, period });
      }
    }
    return alerts;
  }

  /** After the claims committed, best effort, off the account's next check. */
  private mail(mailer: Mailer, accountId: string, alerts: readonly Alert[]): void {
    const sending = (async () => {
      const account = await this.store.findAccount(accountId);
      if (!account) return;
      const members = account.kind === 'org' ? await this.store.listMembers(accountId) : [];
      await mailAlerts(mailer, account, members, alerts, (err, alert) => this.options.onMailError(err, accountId, alert));
    })()
      .catch((err: unknown) => this.options.onError(err, accountId))
      .finally(() => this.mailing.delete(sending));
    this.mailing.add(sending);
  }
}

/** Alerted already this month at this budget or a larger one (a raised budget arms its thresholds again). */
function isAlerted(marks: readonly BudgetAlertMark[], budget: OrgBudget, percent: number, period: string): boolean {
  const mark = marks.find((m) => m.memberId === budget.memberId && m.thresholdPercent === percent);
  return mark !== undefined && (mark.period > period || (mark.period === period && mark.budgetMicros >= budget.monthlyMicros));
}
