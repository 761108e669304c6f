// Running the command line in tests. `runCli` runs it in this process (`main(argv, io)` with streams of its own):
// what a command prints, reads and exits with is the same as from the binary, at a fraction of a spawn's cost.
// `spawnCli` runs it in a child process, for what only a process has: signals, a closed pipe, the bin link.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { main } from '../../src/cli/main.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Working directory of the CLI (default: the repository). */
  cwd?: string;
  /** Variables added to (or, when undefined, removed from) the environment. */
  env?: Record<string, string | undefined>;
}

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = resolve(ROOT, 'src/cli/main.ts');
// By path, so the CLI can run in any working directory.
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** A stream that keeps what is written to it (as it is written: nothing waits in a buffer). */
function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const decoder = new TextDecoder();
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      done();
    },
  });
  return { stream, text: () => text };
}

// The working directory and the environment belong to the process: in-process runs take turns.
let turn: Promise<unknown> = Promise.resolve();

/**
 * Runs the CLI on `args` in this process, with `input` on its stdin (an empty, closed stdin without it, as a
 * spawned CLI gets from a pipe), in `options.cwd` with `options.env` applied; resolves with its exit code and
 * what it printed.
 */
export function runCli(args: string[], input?: string, options: CliOptions = {}): Promise<CliResult> {
  const run = turn.then(async () => {
    const out = collector();
    const err = collector();
    const saved = Object.fromEntries(Object.keys(options.env ?? {}).map((key) => [key, process.env[key]]));
    const cwd = process.cwd();
    const apply = (env: Record<string, string | undefined>) => {
      for (const [key, value] of Object.entries(env)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    };
    apply(options.env ?? {});
    process.chdir(options.cwd ?? ROOT);
    try {
      const stdin = Readable.from(input === undefined ? [] : [input]);
      const code = await main(['node', 'litm-pack', ...args], { stdin, stdout: out.stream, stderr: err.stream });
      return { code, stdout: out.text(), stderr: err.text() };
    } finally {
      process.chdir(cwd);
      apply(saved);
    }
  });
  turn = run.catch(() => undefined);
  return run;
}

/**
 * Runs the CLI from source in a child process. Asynchronous on purpose: a synchronous spawn would block the
 * test worker's event loop.
 */
export function spawnCli(args: string[], input?: string, options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const env = { ...process.env, ...options.env };
    for (const [key, value] of Object.entries(options.env ?? {})) if (value === undefined) delete env[key];
    const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      cwd: options.cwd ?? ROOT,
      env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
