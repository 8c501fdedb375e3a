// The part of KyselyStore (kysely-store.ts) for usage data at scale: exports
// (usage-export.ts), the rollups' check (usage-verify.ts), retention and partitions
// (usage-retention.ts, partitions.ts).
import { KyselyInvitationStore } from './kysely-invitation-store.js';
import { monthsBetween, PARTITIONED_TABLES } from './partitions.js';
import type { TimeRange, UsageRecord } from './store.js';
import type { UsageDataStore, UsageDifference, UsageExportQuery, UsagePruned } from './usage-data-store.js';
import { exportUsage } from './usage-export.js';
import { pruneUsage } from './usage-retention.js';
import { verifyUsage } from './usage-verify.js';

export abstract class KyselyUsageDataStore extends KyselyInvitationStore implements UsageDataStore {
  exportUsage(query: UsageExportQuery): AsyncIterable<UsageRecord> {
    return exportUsage(this.db, query);
  }

  verifyUsage(range: TimeRange): Promise<UsageDifference[]> {
    return verifyUsage(this.db, range);
  }

  pruneUsage(beforeIso: string): Promise<UsagePruned> {
    return pruneUsage(this.db, this.sqlDialect, beforeIso);
  }

  async ensureUsagePartitions(fromIso: string, untilIso: string): Promise<void> {
    for (const table of PARTITIONED_TABLES) await this.sqlDialect.ensurePartitions(table, monthsBetween(fromIso, untilIso));
  }
}
