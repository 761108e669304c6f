import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    qdrantUrl: string;
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const python = resolve(repoRoot, '.venv-qdrant/bin/python');
const server = resolve(repoRoot, 'test/qdrant/engine/server.py');
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * Gives the Qdrant suite a server: QDRANT_URL when set (a real Qdrant), otherwise the
 * test engine (test/qdrant/engine/server.py, the Qdrant engine in-process), started
 * here on a free port and stopped in teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.QDRANT_URL;
  if (external) {
    project.provide('qdrantUrl', external.replace(/\/+$/, ''));
    return async () => undefined;
  }
  if (!existsSync(python)) {
    throw new Error(
      `The Qdrant test engine's Python environment is missing (${python}). ` +
        'Run `bash scripts/setup-qdrant-engine.sh` once, or set QDRANT_URL to a running Qdrant.',
    );
  }
  const { child, port } = await startEngine();
  project.provide('qdrantUrl', `http://127.0.0.1:${port}`);
  return () => stopEngine(child);
}

async function startEngine(): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(python, [server, '--port', '0'], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });

  const port = await new Promise<number>((resolvePort, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The Qdrant test engine did not start within ${STARTUP_TIMEOUT_MS} ms.\n${stderr}`));
    }, STARTUP_TIMEOUT_MS);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^LISTENING (\d+)$/m.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePort(Number(match[1]));
      }
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not start the Qdrant test engine (${python}): ${error.message}`, { cause: error }));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `The Qdrant test engine exited before listening (code ${code}, signal ${signal}).\n${stderr}\n` +
            'If its packages are missing or stale, run `bash scripts/setup-qdrant-engine.sh`.',
        ),
      );
    });
  });
  // Keep the engine's later messages visible (500s are logged there).
  child.stderr?.on('data', (chunk: string) => process.stderr.write(chunk));
  return { child, port };
}

async function stopEngine(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
