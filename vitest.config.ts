import { defineConfig } from 'vitest/config';

// Default suite: no network, no Python. The Qdrant, model and consumer suites have their own configs
// (vitest.qdrant.config.ts, vitest.model.config.ts, vitest.consumer.config.ts, vitest.promptfoo.config.ts).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/qdrant/**', 'test/model/**', 'test/consumer/**', 'test/promptfoo/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
