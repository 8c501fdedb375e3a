// Process entry for `node dist/main.js ...` (bin/lmgate.js does the same).
import { main } from './cli/main.js';

/** Once a command is done, nothing may keep the process alive: at worst it ends this long after. */
const EXIT_GRACE_MS = 1_000;

// `lmgate accounts list | head`: the reader went away, so what is left has nowhere to go;
// end quietly, as other command-line tools do, rather than with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit(process.exitCode ?? 0);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
    setTimeout(() => process.exit(1), EXIT_GRACE_MS).unref();
  },
);
