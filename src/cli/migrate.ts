import type { Config } from '../config/schema.js';
import { openStore } from '../store/kysely-store.js';
import { storeLocation, type CliIo } from './context.js';

export async function migrate(config: Config, io: CliIo, json: boolean): Promise<number> {
  const store = openStore(storeLocation(config));
  try {
    const applied = await store.migrate();
    io.out(json ? JSON.stringify({ applied }) : applied.length ? `applied: ${applied.join(', ')}` : 'up to date');
    return 0;
  } finally {
    await store.close();
  }
}
