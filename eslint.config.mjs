// Lint: typescript-eslint's recommended type-checked rules over everything TypeScript in the repository.
// Formatting is prettier's (npm run format), not the linter's. A rule turned off here says why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.conformance/**',
      '.promptfoo/**',
      '.venv*/**',
      'test/consumer/fixtures/**',
      'test-results/**',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // `const { secret: _secret, ...rest } = x` is how a key is left out without mutating x; a parameter named
      // `_x` is one a signature keeps for its callers (an interface's method, a public class's arity).
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
  {
    // vitest types its asymmetric matchers (expect.any, expect.stringMatching, expect.objectContaining, ...) as
    // any, so that they fit inside any expected value; a test places them there on purpose. When these two rules
    // were turned off here, 37 of the 38 lines they still reported in test/ were such matchers (the other:
    // Object.fromEntries in test/sources-formats.test.ts).
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    // Commands print through cli/io.ts, so main(argv, io) runs them with streams of the caller's (the tests run
    // the CLI in process). serve and mcp own their process (signals, the stdio protocol).
    files: ['src/cli/**/*.ts'],
    ignores: ['src/cli/io.ts', 'src/cli/commands/serve.ts', 'src/cli/commands/mcp.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['stdout', 'stderr', 'stdin'].map((property) => ({ object: 'process', property, message: `use ${property}() from cli/io.ts` })),
      ],
    },
  },
);
