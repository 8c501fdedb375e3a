// A secret the operator types (a password): never an argument, which the shell history and
// `ps` would keep. Piped in, it is the first line of stdin; at a terminal, it is asked for
// twice with echo off.
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './context.js';

type Input = NodeJS.ReadableStream & { isTTY?: boolean };

export async function readSecret(input: Input, output: NodeJS.WritableStream, prompt: string): Promise<string> {
  if (!input.isTTY) return firstLine(input);
  const first = await askHidden(input, output, `${prompt}: `);
  const again = await askHidden(input, output, `${prompt} again: `);
  if (first !== again) throw new CliError('the two entries differ');
  return first;
}

async function firstLine(input: Input): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    const end = text.indexOf('\n');
    if (end !== -1) return text.slice(0, end).replace(/\r$/, '');
  }
  return text.replace(/\r$/, '');
}

function askHidden(input: Input, output: NodeJS.WritableStream, prompt: string): Promise<string> {
  output.write(prompt);
  // The terminal echoes through readline's output: a sink that drops it hides what is typed.
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input, output: silent, terminal: true });
  return new Promise((resolve) => {
    lines.question('', (answer) => {
      lines.close();
      output.write('\n');
      resolve(answer);
    });
  });
}
