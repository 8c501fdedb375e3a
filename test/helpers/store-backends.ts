// Both databases a store suite runs against: a temporary SQLite file and a fresh database
// on the local PostgreSQL server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KyselyStore, openStore } from '../../src/store/kysely-store.js';
import type { Store } from '../../src/store/store.js';
import { createTestDatabase } from './postgres.js';

export interface OpenedStore {
  store: Store;
  /** A second, independent handle on the same database (another instance, the CLI). */
  openAnother(): Store;
  cleanup(): Promise<void>;
}

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  open(): Promise<OpenedStore>;
}

export const STORE_BACKENDS: StoreBackend[] = [
  {
    name: 'sqlite',
    open: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lmgate-store-'));
      const location = { sqlitePath: join(dir, 'lmgate.db') };
      return {
        store: openStore(location),
        openAnother: () => openStore(location),
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const database = await createTestDatabase();
      const location = { databaseUrl: database.url, sqlitePath: '/nonexistent/never-used.db' };
      return {
        store: openStore(location),
        openAnother: () => openStore(location),
        cleanup: () => database.drop(),
      };
    },
  },
];

/** The opened store as the Kysely store, for suites that read or write its tables directly. */
export function kyselyOf(opened: OpenedStore): KyselyStore {
  if (!(opened.store instanceof KyselyStore)) throw new Error('expected the Kysely store');
  return opened.store;
}
