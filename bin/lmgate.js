#!/usr/bin/env node
// The operator's command: `lmgate serve`, `lmgate keys create ...` (see README).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : err); process.exitCode = 1; },
);
