import { defineConfig } from 'vitest/config';

// Qdrant suite: runs against QDRANT_URL when set, else against the in-process Qdrant
// engine (test/qdrant/engine, set up by `bash scripts/setup-qdrant-engine.sh`).
export default defineConfig({
  test: {
    include: ['test/qdrant/**/*.test.ts'],
    exclude: ['node_modules/**'],
    globalSetup: ['test/qdrant/global-setup.ts'],
    // One server for the whole run; files share it, so they run one at a time.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    pool: 'forks',
  },
});
