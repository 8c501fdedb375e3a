#!/usr/bin/env node
// The operator's command (`./lmgate --help` from the checkout); the build puts the code in dist/.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('lmgate: not built yet (no dist/main.js): run npm install, or npm run build\n');
  process.exit(1);
}
await import(entry.href);
