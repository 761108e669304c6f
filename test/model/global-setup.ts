import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startPythonServer } from '../helpers/python-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the model server (test/model/server.py): real all-MiniLM-L6-v2 behind embeddings and rerank protocols. */
    modelUrl: string;
  }
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const python = resolve(repoRoot, '.venv-model/bin/python');

/** Starts the model server once for the model suite, on a free loopback port, and stops it in teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!existsSync(python)) {
    throw new Error(`The model server's Python environment is missing (${python}). Run \`bash scripts/setup-model-server.sh\` once.`);
  }
  const server = await startPythonServer({
    python,
    script: resolve(repoRoot, 'test/model/server.py'),
    cwd: repoRoot,
    name: 'model server',
    setupHint: 'If its packages are missing or stale, run `bash scripts/setup-model-server.sh`.',
    startupTimeoutMs: 120_000,
  });
  project.provide('modelUrl', `http://127.0.0.1:${server.port}`);
  return () => server.stop();
}
