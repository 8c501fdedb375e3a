// A command whose reader goes away (`lmgate accounts list | head`) ends quietly with its
// own status, as other command-line tools do, instead of with an unhandled EPIPE's stack.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';

it('ends with status 0 and nothing on stderr when its stdout is closed before it writes', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});
