// `store.exportUsage` to stdout as CSV, in a process of its own so its time and peak memory
// are its own: what `npm run bench:usage-scale` measures when `lmgate usage export` is not
// there. Writes wait for stdout to drain, so memory holds about one page.
// Usage: node --import tsx bench/usage-scale-export.ts <database url> <from iso> <until iso> [account id]
import { once } from 'node:events';
import { openStore } from '../src/store/kysely-store.js';

const [databaseUrl, fromIso, untilIso, accountId] = process.argv.slice(2);
if (!databaseUrl || !fromIso || !untilIso) throw new Error('usage: usage-scale-export.ts <database url> <from iso> <until iso> [account id]');
const store = openStore({ databaseUrl, sqlitePath: '/nonexistent/never-used.db' });
try {
  let rows = 0;
  for await (const record of store.exportUsage({ fromIso, untilIso, accountId })) {
    const line = `${record.createdAt},${record.requestId},${record.model},${record.keyId},${record.promptTokens},${record.completionTokens},${record.costMicros},${record.status}\n`;
    if (!process.stdout.write(line)) await once(process.stdout, 'drain');
    rows++;
  }
  process.stderr.write(`rows ${rows}\n`);
} finally {
  await store.close();
}
