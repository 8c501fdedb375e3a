// Credits: an operator's grants and adjustments, and a customer's redemption of a code.
import { canonicalRedemptionCode, hashRedemptionCode } from '../billing/redemption-code.js';
import { Refusal } from '../errors.js';
import type { Actor, LedgerEntry, RedeemOutcome } from '../store/store.js';
import { audit, CommandSet } from './unit-of-work.js';

export interface CreditChange {
  accountId: string;
  /** Positive adds credit; an adjustment may be negative, never below a zero balance. */
  amountMicros: number;
  reason: string;
}

export class CreditCommands extends CommandSet {
  grant(change: CreditChange, actor?: Actor): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('grant', change, actor);
  }
  /** Throws BalanceWouldGoNegativeError rather than take the balance below zero. */
  adjust(change: CreditChange, actor?: Actor): Promise<{ entry: LedgerEntry; balanceMicros: number }> {
    return this.changeBalance('adjustment', change, actor);
  }
  /** A code typed by a customer; anything but a first redemption of a live code is refused. */
  async redeemCode(accountId: string, typed: string): Promise<Extract<RedeemOutcome, { outcome: 'redeemed' }>> {
    const canonical = canonicalRedemptionCode(typed);
    const result = canonical ? await this.commit((tx) => tx.redeemCode(accountId, hashRedemptionCode(canonical), new Date().toISOString())) : undefined;
    if (result?.outcome === 'redeemed') return result;
    if (result?.outcome === 'expired') throw new Refusal('code_expired');
    if (result?.outcome === 'already_redeemed') throw new Refusal('code_redeemed');
    throw new Refusal('code_unknown');
  }
  private changeBalance(kind: 'grant' | 'adjustment', { accountId, amountMicros, reason }: CreditChange, actor: Actor | undefined) {
    return this.commit(async (tx) => {
      const written = await tx.appendLedgerEntry({ accountId, kind, amountMicros, reason });
      await audit(tx, actor, {
        action: kind === 'grant' ? 'credits.grant' : 'credits.adjust',
        target: { kind: 'account', id: accountId },
        before: { balance_micros: written.balanceMicros - amountMicros },
        after: { balance_micros: written.balanceMicros, amount_micros: amountMicros, reason, ledger_entry_id: written.entry.id },
      });
      return written;
    });
  }
}
