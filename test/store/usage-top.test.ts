// The costliest accounts and keys of a period (usage-top.ts) against the same ranking done by
// hand from the records themselves, on SQLite and PostgreSQL: skewed spending, where the
// first lists settle it, and spending all alike, where costs tie and only summing every
// row can; lists one or two deep, so every round and the last resort are reached. Then
// verifyUsage on the rollups across accounts: nothing, until a difference is planted.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRandom } from '../../src/models/lorem-text.js';
import type { KyselyStore } from '../../src/store/kysely-store.js';
import type { UsageRecord } from '../../src/store/store.js';
import { sumsOf } from '../../src/store/usage-rollup.js';
import type { UsageSumColumns } from '../../src/store/usage-rollup-tables.js';
import { topByCost, type RankedBy, type RankedUsage } from '../../src/store/usage-top.js';
import { kyselyOf, STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';
import { plainRecord } from '../helpers/usage-record.js';

const ACCOUNTS = 24;
const DAY_MS = 86_400_000;
const FIRST_DAY_MS = Date.parse('2025-09-20T00:00:00.000Z');
const DAYS = 80; // into December: four months, two of them whole
const PERIODS = [
  ['2025-10-01', '2025-11-01'], // one whole month
  ['2025-09-25', '2025-11-09'], // cut at both ends
  ['2025-11-30', '2025-12-02'], // two days across a month's end
  ['2025-10-03', '2025-12-05'], // most of October: its month less two days
  ['2025-11-02', '2025-11-30'], // a month less a day at each end
  ['2025-10-07', '2025-10-08'], // one day
  ['2025-01-01', '2026-01-01'], // everything
  ['2026-02-01', '2026-03-01'], // nothing
] as const;

describe.each(STORE_BACKENDS)('the costliest of a period on $name', (backend) => {
  let opened: OpenedStore;
  let store: KyselyStore;
  let accounts: string[];
  const records: UsageRecord[] = [];

  beforeAll(async () => {
    opened = await backend.open();
    store = kyselyOf(opened);
    await store.migrate();
    accounts = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const account = await store.createAccount({ email: `top${i}@example.test`, tier: 'free' });
      await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1e12 });
      accounts.push(account.id);
    }
    const random = createRandom(33);
    for (let day = 0; day < DAYS; day++) {
      for (let i = 0; i < ACCOUNTS; i++) {
        // The first half spend by a steep law, the second half all alike (and so tie).
        const skewed = i < ACCOUNTS / 2;
        if (skewed && random() < 0.3) continue;
        const cost = skewed ? Math.floor((10_000 / (i + 1)) * (0.5 + random())) : 100;
        records.push({
          ...plainRecord(accounts[i]!, cost, { keyId: `key_${i}_${day % 3}`, completionTokens: Math.floor(random() * 50) }),
          createdAt: new Date(FIRST_DAY_MS + day * DAY_MS + Math.floor(random() * DAY_MS)).toISOString(),
          model: day % 2 === 0 ? 'model-a' : 'model-b',
          reasoningTokens: day % 5,
        });
      }
    }
    for (let at = 0; at < records.length; at += 500) await store.recordUsage(records.slice(at, at + 500));
  }, 60_000);

  afterAll(async () => {
    await store.close();
    await opened.cleanup();
  });

  /** The ranking done by hand: every record of the period summed, costliest first, then by id. */
  function byHand(by: RankedBy, fromDay: string, untilDay: string, top: number): RankedUsage[] {
    const totals = new Map<string, RankedUsage>();
    for (const r of records) {
      const day = r.createdAt.slice(0, 10);
      if (day < fromDay || day >= untilDay) continue;
      const id = by === 'account' ? r.accountId : r.keyId;
      const total = totals.get(id) ?? { id, accountId: r.accountId, sums: sumsOf({}) };
      const add: Partial<UsageSumColumns> = {
        requests: 1, prompt_tokens: r.promptTokens, completion_tokens: r.completionTokens, reasoning_tokens: r.reasoningTokens, cost_micros: r.costMicros,
      };
      for (const [field, value] of Object.entries(add)) total.sums[field as keyof UsageSumColumns] += value;
      totals.set(id, total);
    }
    return [...totals.values()].sort((a, b) => b.sums.cost_micros - a.sums.cost_micros || (a.id < b.id ? -1 : 1)).slice(0, top);
  }

  it('ranks accounts and keys as the records do, for every period, size of top and depth of list', async () => {
    let compared = 0;
    for (const by of ['account', 'key'] as const) {
      for (const [fromDay, untilDay] of PERIODS) {
        for (const top of [1, 3, 7, 100]) {
          for (const firstDepth of [1, 2, undefined]) {
            const expected = byHand(by, fromDay, untilDay, top);
            expect(await topByCost(store.db, by, fromDay, untilDay, top, { firstDepth }), `${by} ${fromDay}..${untilDay} top ${top} depth ${firstDepth}`).toEqual(expected);
            compared += expected.length;
          }
        }
      }
    }
    // The periods are not all empty: many rows were compared.
    expect(compared).toBeGreaterThan(1000);
  });

  it("ranks one account's keys from its own rows", async () => {
    const account = accounts[2]!;
    const mine = byHand('key', '2025-09-25', '2025-11-09', 100).filter((row) => row.accountId === account);
    expect(mine.length).toBe(3);
    expect(await topByCost(store.db, 'key', '2025-09-25', '2025-11-09', 100, { accountId: account })).toEqual(mine);
  });

  it('verifies the rollups across accounts, and names the table, month and field of a planted difference', async () => {
    const everything = { fromIso: '2025-09-01T00:00:00.000Z', untilIso: '2026-01-01T00:00:00.000Z' };
    expect(await store.verifyUsage(everything)).toEqual([]);
    const account = accounts[4]!;
    await sql`update usage_accounts_monthly set cost_micros = cost_micros + 7 where account_id = ${account} and month = ${'2025-10-01'}`.execute(store.db);
    await sql`update usage_models_daily set requests = requests - 1 where day = ${'2025-11-04'} and model = 'model-b'`.execute(store.db);
    const found = await store.verifyUsage(everything);
    const october = found.find((difference) => difference.group === 'usage_accounts_monthly');
    expect(october).toMatchObject({ kind: 'rollup', day: '2025-10-01', accountId: account, field: 'cost_micros' });
    expect(october!.actual - october!.expected).toBe(7);
    expect(found).toContainEqual(expect.objectContaining({ day: '2025-11-04', accountId: '', group: 'usage_models_daily model-b 200', field: 'requests' }));
    expect(found).toHaveLength(2);
  });
});
