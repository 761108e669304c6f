import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startPythonServer } from '../helpers/python-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    qdrantUrl: string;
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const python = resolve(repoRoot, '.venv-qdrant/bin/python');
const server = resolve(repoRoot, 'test/qdrant/engine/server.py');

/**
 * Gives the Qdrant suite a server: QDRANT_URL when set (a real Qdrant), otherwise the
 * test engine (test/qdrant/engine/server.py, the Qdrant engine in-process), started
 * here on a free port and stopped in teardown.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.QDRANT_URL;
  if (external) {
    project.provide('qdrantUrl', external.replace(/\/+$/, ''));
    return () => Promise.resolve();
  }
  if (!existsSync(python)) {
    throw new Error(
      `The Qdrant test engine's Python environment is missing (${python}). ` +
        'Run `bash scripts/setup-qdrant-engine.sh` once, or set QDRANT_URL to a running Qdrant.',
    );
  }
  const engine = await startPythonServer({
    python,
    script: server,
    cwd: repoRoot,
    name: 'Qdrant test engine',
    setupHint: 'If its packages are missing or stale, run `bash scripts/setup-qdrant-engine.sh`.',
  });
  project.provide('qdrantUrl', `http://127.0.0.1:${engine.port}`);
  return () => engine.stop();
}
