// The store's alert claims, on SQLite and PostgreSQL: a budget threshold is claimed once per
// month and budget (a later month or a larger budget claims it again, an earlier month or a
// smaller budget never), a balance alert once per crossing (a credit that lifts the balance
// back over its threshold arms it again), and of many handles claiming at once exactly one
// wins, its webhook event written with the claim.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Commands } from '../../src/commands/commands.js';
import type { Account, Store } from '../../src/store/store.js';
import { STORE_BACKENDS, type OpenedStore } from '../helpers/store-backends.js';

describe.each(STORE_BACKENDS)('alert claims on $name', (backend) => {
  let opened: OpenedStore;
  let store: Store;
  let account: Account;

  beforeEach(async () => {
    opened = await backend.open();
    store = opened.store;
    await store.migrate();
    account = await store.createAccount({ email: `alerts-${process.pid}-${Date.now()}@example.test`, tier: 'free' });
  });
  afterEach(async () => {
    await store.close();
    await opened.cleanup();
  });

  const mark = (period: string, budgetMicros: number, thresholdPercent = 50, memberId: string | null = null) => ({ memberId, thresholdPercent, period, budgetMicros });

  it('a budget threshold: once a month at a budget; again in a later month or at a larger budget', async () => {
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 1_000))).toBe(true);
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 1_000))).toBe(false);
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 900))).toBe(false); // lowered
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 1_000, 80))).toBe(true); // another threshold
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 1_000, 50, 'acct_member'))).toBe(true); // another budget
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 2_000))).toBe(true); // raised
    expect(await store.claimBudgetAlert(account.id, mark('2026-04', 500))).toBe(true); // a new month
    expect(await store.claimBudgetAlert(account.id, mark('2026-03', 5_000))).toBe(false); // a late check of last month
    expect(await store.listBudgetAlerts(account.id)).toEqual(
      expect.arrayContaining([mark('2026-04', 500), mark('2026-03', 1_000, 80), mark('2026-03', 1_000, 50, 'acct_member')]),
    );
  });

  it('a balance alert: claimed once below its threshold, armed again by a credit that lifts the balance over it', async () => {
    expect(await store.claimBalanceAlert(account.id)).toBeUndefined(); // no threshold
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 1_000, reason: 't' });
    await store.setAlertSettings(account.id, { balanceBelowMicros: 500 });
    expect(await store.claimBalanceAlert(account.id)).toBeUndefined(); // not below
    await store.appendLedgerEntry({ accountId: account.id, kind: 'adjustment', amountMicros: -600, reason: 't' });
    expect(await store.claimBalanceAlert(account.id)).toEqual({ balanceMicros: 400, thresholdMicros: 500 });
    expect(await store.claimBalanceAlert(account.id)).toBeUndefined();
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 50, reason: 't' }); // 450: still below
    expect((await store.findAlertSettings(account.id)).balanceArmed).toBe(false);
    await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 50, reason: 't' }); // 500: back at it
    expect((await store.findAlertSettings(account.id)).balanceArmed).toBe(true);
    await store.appendLedgerEntry({ accountId: account.id, kind: 'adjustment', amountMicros: -1, reason: 't' });
    expect(await store.claimBalanceAlert(account.id)).toEqual({ balanceMicros: 499, thresholdMicros: 500 });
  });

  it('settings: defaults until set, thresholds kept in order, a new balance threshold armed', async () => {
    expect(await store.findAlertSettings(account.id)).toEqual({ accountId: account.id, balanceBelowMicros: null, balanceArmed: true, budgetThresholds: [50, 80, 100], customThresholds: false });
    const commands = new Commands(store);
    await commands.alerts.set(account.id, { budgetThresholds: [90, 25, 90] });
    expect(await store.findAlertSettings(account.id)).toMatchObject({ balanceBelowMicros: null, budgetThresholds: [25, 90], customThresholds: true });
    await commands.alerts.set(account.id, { balanceBelowMicros: 7 });
    expect(await store.findAlertSettings(account.id)).toMatchObject({ balanceBelowMicros: 7, budgetThresholds: [25, 90] });
    await commands.alerts.set(account.id, { budgetThresholds: null, balanceBelowMicros: null });
    expect(await store.findAlertSettings(account.id)).toMatchObject({ balanceBelowMicros: null, budgetThresholds: [50, 80, 100], customThresholds: false });
    await expect(commands.alerts.set(account.id, { budgetThresholds: [0, 120] })).rejects.toMatchObject({ code: 'validation_failed' });
  });

  it('many handles claiming one crossing at once: one claim, one webhook event', async () => {
    // PostgreSQL: six connections, as six instances; SQLite (one instance, one writer): six claims interleaved on one.
    const others = backend.name === 'postgres' ? Array.from({ length: 6 }, () => opened.openAnother()) : [];
    const handles = others.length > 0 ? others : Array.from({ length: 6 }, () => store);
    try {
      await store.appendLedgerEntry({ accountId: account.id, kind: 'grant', amountMicros: 100, reason: 't' });
      await store.setAlertSettings(account.id, { balanceBelowMicros: 500 });
      await new Commands(store).webhooks.add(account.id, 'https://hooks.example.test/in', ['balance.low', 'budget.threshold']);
      const now = new Date();
      const balance = await Promise.all(handles.map((handle) => new Commands(handle).alerts.claimBalanceLow(account.id, now)));
      expect(balance.filter((claimed) => claimed !== undefined)).toHaveLength(1);
      const budget = await Promise.all(handles.map((handle) => new Commands(handle).alerts.claimBudgetThreshold(account.id, mark('2026-03', 1_000), 600, now)));
      expect(budget.filter((claimed) => claimed !== undefined)).toHaveLength(1);
      const [endpoint] = await store.listWebhookEndpoints(account.id);
      const deliveries = await store.listWebhookDeliveries(endpoint!.id);
      expect(deliveries.map((d) => d.eventType).sort()).toEqual(['balance.low', 'budget.threshold']);
    } finally {
      await Promise.all(others.map((handle) => handle.close()));
    }
  });
});
