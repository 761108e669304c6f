import { defineConfig } from 'vitest/config';

// The promptfoo example suite (npm run test:promptfoo; npm test runs it): promptfoo and the Node 22 it needs
// are installed into .promptfoo/ from the npm registry the first time (scripts/setup-promptfoo.mjs), so it is
// kept out of the default suite, which needs no network.
export default defineConfig({
  test: {
    include: ['test/promptfoo/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
  },
});
