import { defineConfig } from 'vitest/config';

// Model suite: tests that need real embeddings or rerank scores, served by test/model/server.py
// (all-MiniLM-L6-v2, offline; set up by `bash scripts/setup-model-server.sh`).
export default defineConfig({
  test: {
    include: ['test/model/**/*.test.ts'],
    exclude: ['node_modules/**'],
    globalSetup: ['test/model/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    pool: 'forks',
  },
});
