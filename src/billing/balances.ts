// An account's balance as every surface shows it (the API's billing endpoint, the
// dashboard, the admin API and the console): live, every settled charge taken off whether
// or not the store has it yet, with what running requests hold. In shared mode one read of
// one Redis hash, so stored, pending and reserved are never taken from different moments.
// The CLI, with no running admission, reads the store's (`storedBalances`).
import type { LedgerQueries } from '../store/queries.js';
import type { AdmissionService } from './admission.js';

export interface AccountBalance {
  balanceMicros: number;
  /** Held by running requests. */
  reservedMicros: number;
  /** What a new request may reserve: the balance less what is held, never below 0. */
  availableMicros: number;
}

export class Balances {
  constructor(private readonly admission: Pick<AdmissionService, 'snapshot'>) {}

  async of(accountId: string): Promise<AccountBalance> {
    const { balanceMicros, reservedMicros } = await this.admission.snapshot(accountId);
    return { balanceMicros, reservedMicros, availableMicros: Math.max(0, balanceMicros - reservedMicros) };
  }
}

/** The balances where no admission runs (the CLI): the store's, with nothing held. */
export function storedBalances(store: Pick<LedgerQueries, 'balanceOf'>): Balances {
  return new Balances({ snapshot: async (accountId) => ({ balanceMicros: await store.balanceOf(accountId), reservedMicros: 0 }) });
}
