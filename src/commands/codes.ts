// Redemption codes: made in batches (the codes exist only in the result; the store keeps
// hashes) and disabled.
import { generateRedemptionCode, hashRedemptionCode, redemptionCodeHint } from '../billing/redemption-code.js';
import { Refusal } from '../errors.js';
import type { Actor, RedemptionCode } from '../store/store.js';
import { audit, CommandSet } from './unit-of-work.js';

export interface NewCodes {
  amountMicros: number;
  count: number;
  expiresAt: string | null;
}

export class CodeCommands extends CommandSet {
  /** Redemption codes; the codes themselves exist only in the result (the store keeps hashes). */
  async create(input: NewCodes, actor: Actor): Promise<{ code: string; record: RedemptionCode }[]> {
    const codes = Array.from({ length: input.count }, generateRedemptionCode);
    return this.store.transaction(async (tx) => {
      const records = await tx.createRedemptionCodes(
        codes.map((code) => ({ codeHash: hashRedemptionCode(code), hint: redemptionCodeHint(code), amountMicros: input.amountMicros, expiresAt: input.expiresAt })),
      );
      await audit(tx, actor, {
        action: 'codes.create',
        target: { kind: 'code', id: records[0]?.id ?? '' },
        before: null,
        after: { code_ids: records.map((r) => r.id), amount_micros: input.amountMicros, count: input.count, expires_at: input.expiresAt },
      });
      return records.map((record, i) => ({ code: codes[i]!, record }));
    });
  }
  /** Refuses an unknown code (code_unknown) and a redeemed one (code_redeemed); a disabled one stays as it is. */
  async disable(codeId: string, actor: Actor): Promise<RedemptionCode> {
    return this.store.transaction(async (tx) => {
      const before = await tx.findRedemptionCode(codeId);
      if (!before) throw new Refusal('code_unknown');
      if (before.redeemedAt !== null) throw new Refusal('code_redeemed');
      if (before.disabledAt !== null) return before;
      const after = (await tx.disableRedemptionCode(codeId))!;
      await audit(tx, actor, {
        action: 'code.disable',
        target: { kind: 'code', id: codeId },
        before: { disabled_at: before.disabledAt, redeemed_at: before.redeemedAt },
        after: { disabled_at: after.disabledAt, redeemed_at: after.redeemedAt },
      });
      return after;
    });
  }
}
