import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

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

/**
 * Runs the CLI from source in a child process. Asynchronous on purpose: a synchronous spawn would block the
 * test worker's event loop.
 */
export function runCli(args: string[], input?: string, options: CliOptions = {}): Promise<CliResult> {
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
