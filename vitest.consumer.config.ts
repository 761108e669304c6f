import { defineConfig } from 'vitest/config';

// Consumer suite: the package as users get it. The global setup packs the tarball (`npm pack`, which builds),
// installs it with the framework peers into a temporary project (from npm's cache when it is warm), and the
// tests require, import, typecheck and run it there.
export default defineConfig({
  test: {
    include: ['test/consumer/**/*.test.ts'],
    exclude: ['node_modules/**'],
    globalSetup: ['test/consumer/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 600_000,
    teardownTimeout: 60_000,
    pool: 'forks',
  },
});
