import { defineConfig } from 'vitest/config';

// Default suite: no network, no Python. The Qdrant suite has its own config (vitest.qdrant.config.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/qdrant/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
