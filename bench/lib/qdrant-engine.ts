import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './paths.js';

export interface QdrantEndpoint {
  url: string;
  /** What serves it: a real server (QDRANT_URL) or the in-process test engine. */
  kind: 'server' | 'test-engine';
  stop(): Promise<void>;
}

function enginePython(): string {
  const candidates = [
    process.env.LITM_QDRANT_PYTHON,
    join(REPO_ROOT, '.venv-qdrant', 'bin', 'python'),
    join(REPO_ROOT, '.venv', 'bin', 'python'),
  ].filter((p): p is string => typeof p === 'string' && p.length > 0);
  return candidates.find((p) => existsSync(p)) ?? 'python3';
}

/**
 * QDRANT_URL when set (a real server, e.g. `docker compose -f docker-compose.qdrant.yml up -d`), else the repository's test engine
 * (test/qdrant/engine/server.py, the Qdrant engine in-process through qdrant-edge-py; set up by
 * scripts/setup-qdrant-engine.sh). Resolves to null, with the reason on stderr, when neither is available.
 */
export async function startQdrant(): Promise<QdrantEndpoint | null> {
  if (process.env.QDRANT_URL) {
    return { url: process.env.QDRANT_URL, kind: 'server', stop: () => Promise.resolve() };
  }
  const server = join(REPO_ROOT, 'test', 'qdrant', 'engine', 'server.py');
  if (!existsSync(server)) {
    process.stderr.write(`qdrant: ${server} not found; skipping\n`);
    return null;
  }
  const python = enginePython();
  const child: ChildProcess = spawn(python, [server, '--port', '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const port = await new Promise<number | null>((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(null), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  if (port === null) {
    child.kill('SIGTERM');
    process.stderr.write(
      `qdrant: the test engine did not start (${python}); run scripts/setup-qdrant-engine.sh. ${stderr.trim().split('\n').slice(-3).join(' | ')}\n`,
    );
    return null;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    kind: 'test-engine',
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The Qdrant store a benchmark ingests into: a fresh collection per run, the label for its table rows. */
export async function openBenchQdrantStore(
  endpoint: QdrantEndpoint,
  collection: string,
  embeddings: import('./cached-embeddings.js').CachedEmbeddings,
  chunkTokens: number,
) {
  const { QdrantHybridStore } = await import('../../src/qdrant/index.js');
  const store = new QdrantHybridStore({
    url: endpoint.url,
    collection: `${collection}-${process.pid}`,
    embeddings,
    // The cached embeddings serve only benchmark texts, so the dimension is given rather than probed.
    vectorSize: embeddings.dim,
    chunkTokens,
  });
  await store.ensureCollection();
  return { store, label: endpoint.kind === 'server' ? 'Qdrant server' : 'Qdrant test engine' };
}
