// A real llama.cpp llama-server for the tests that need an upstream's own behaviour rather than
// fake-upstream's idea of it: its token counts, its usage chunks, its error bodies. It serves
// a tiny random-weight model (test/llama/write-model.py) that the tests write themselves, since
// no weights can be downloaded; its text is noise, but its wire format and counting are real.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const ROOT = new URL('../..', import.meta.url).pathname;
const BUILD_SCRIPT = join(ROOT, 'test/llama/build-server.sh');
const MODEL_WRITER = join(ROOT, 'test/llama/write-model.py');

/** The name the server answers to (`model` in its bodies, the one entry of /v1/models). */
export const LLAMA_MODEL = 'lmgate-tiny';

const STARTUP_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 10_000;
// Enough of the server's log to show why it did not start, without keeping all of it.
const OUTPUT_KEPT_CHARS = 16_000;

export interface LlamaInstall {
  serverPath: string;
  modelPath: string;
}

export interface LlamaServerOptions {
  /**
   * Serve /v1/embeddings, with mean pooling as embedding models do. An input must then fit in
   * one physical batch (-ub, default 512 tokens): llama-server answers 500 to a longer one.
   */
  embeddings?: boolean;
  /** Slots, i.e. requests decoded at once (`-np`); default 4. */
  parallel?: number;
  /**
   * Context size in tokens (`-c`), shared by the slots: each request gets ctx / parallel.
   * Default 2048, the model's trained length.
   */
  ctx?: number;
  extraArgs?: string[];
}

export interface LlamaServer {
  /** The OpenAI base URL, ending in /v1. */
  url: string;
  origin: string;
  model: string;
  /** Stops the server and resolves once it exited. */
  close(): Promise<void>;
}

let install: Promise<LlamaInstall> | undefined;

/**
 * Builds llama-server (cached per machine by build-server.sh) and writes the model (cached by the
 * writer's content), once per process. The first build takes about 15 minutes, so the suite's
 * global setup calls this before any test hook's timeout starts.
 */
export function prepareLlama(): Promise<LlamaInstall> {
  install ??= buildAndWrite();
  return install;
}

async function buildAndWrite(): Promise<LlamaInstall> {
  const serverPath = await buildServer();
  // build-server.sh keeps the checkout next to the build: <dir>/src and <dir>/build/bin/llama-server.
  const llamaSource = join(dirname(dirname(dirname(serverPath))), 'src');
  const modelPath = await writeModel(llamaSource, serverPath);
  return { serverPath, modelPath };
}

async function buildServer(): Promise<string> {
  try {
    // No timeout: a first build is minutes of compiling, and the script fails on its own.
    const { stdout } = await run('bash', [BUILD_SCRIPT], { maxBuffer: 16 * 1024 * 1024 });
    const serverPath = stdout.trim().split('\n').at(-1) ?? '';
    if (!existsSync(serverPath)) throw new Error(`build-server.sh printed no binary path: ${stdout}`);
    return serverPath;
  } catch (error) {
    // The script prints the end of build.log on stderr when the build fails.
    const stderr = (error as { stderr?: unknown }).stderr;
    throw new Error(`building llama-server failed:\n${typeof stderr === 'string' ? stderr : ''}`, { cause: error });
  }
}

async function writeModel(llamaSource: string, serverPath: string): Promise<string> {
  // Keyed by the writer and the llama.cpp build, so every worker of a run (and later runs)
  // shares one file, and any change to either writes a new one. The writer renames a finished
  // file into place, so a concurrent writer never exposes half of one.
  const key = createHash('sha256').update(await readFile(MODEL_WRITER)).update(serverPath).digest('hex').slice(0, 16);
  const directory = join(tmpdir(), 'lmgate-llama-models');
  const modelPath = join(directory, `tiny-${key}.gguf`);
  if (existsSync(modelPath)) return modelPath;
  await mkdir(directory, { recursive: true });
  // Debian's python3 is the one build-server.sh gives numpy; a pyenv python3 on PATH may lack it.
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  try {
    await run(python, [MODEL_WRITER, llamaSource, modelPath]);
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr;
    throw new Error(`writing the test model failed:\n${typeof stderr === 'string' ? stderr : ''}`, { cause: error });
  }
  return modelPath;
}

/** Starts llama-server on a free loopback port and resolves once /health answers 200. */
export async function startLlamaServer(options: LlamaServerOptions = {}): Promise<LlamaServer> {
  const { serverPath, modelPath } = await prepareLlama();
  const args = [
    '--model', modelPath,
    '--alias', LLAMA_MODEL,
    '--host', '127.0.0.1',
    // The server binds port 0 itself and logs the port it got: no window for another process.
    '--port', '0',
    '--ctx-size', String(options.ctx ?? 2048),
    '--parallel', String(options.parallel ?? 4),
    // One thread each: the model is tiny, and suites run several servers on a 2-core machine.
    '--threads', '1',
    '--threads-batch', '1',
    // The chat template through Jinja, so the default system prompt and tools reach the prompt.
    '--jinja',
    '--no-webui',
    ...(options.embeddings ? ['--embeddings', '--pooling', 'mean'] : []),
    ...(options.extraArgs ?? []),
  ];
  // LLAMA_ARG_* variables would set flags of their own; these servers take only the ones above.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('LLAMA_ARG_')));
  const child = spawn(serverPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (data: Buffer): void => {
    output = (output + data.toString()).slice(-OUTPUT_KEPT_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const commandAndLog = (): string => `llama-server ${args.join(' ')}\n${output}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    // A slot still decoding can hold SIGTERM's shutdown; the tests never need a graceful stop.
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  try {
    const origin = await waitForListening(child, exited, () => output);
    await waitForHealth(origin, exited);
    return { url: `${origin}/v1`, origin, model: LLAMA_MODEL, close: stop };
  } catch (error) {
    await stop();
    throw new Error(`llama-server did not start: ${(error as Error).message}\n${commandAndLog()}`, { cause: error });
  }
}

function waitForListening(child: ChildProcess, exited: Promise<void>, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    // Logged once the model is loaded and the socket is bound.
    const onData = (): void => {
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    const timer = setTimeout(() => reject(new Error(`no "listening on" within ${STARTUP_TIMEOUT_MS} ms`)), STARTUP_TIMEOUT_MS);
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited early (code ${child.exitCode}, signal ${child.signalCode})`));
    });
  });
}

async function waitForHealth(origin: string, exited: Promise<void>): Promise<void> {
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline && !hasExited) {
    try {
      const response = await fetch(`${origin}/health`);
      last = `${response.status} ${await response.text()}`;
      if (response.status === 200) return;
    } catch (error) {
      last = String(error);
    }
    // 503 "Loading model" is the only other answer; polling is how its readiness is learnt.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(hasExited ? 'exited before /health answered 200' : `/health never answered 200 (last: ${last})`);
}
