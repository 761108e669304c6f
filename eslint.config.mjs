// Lint: typescript-eslint's recommended type-checked rules over everything TypeScript in the repository.
// Formatting is prettier's (npm run format), not the linter's. A rule turned off here says why.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.conformance/**', '.venv*/**', 'test/consumer/fixtures/**', 'test-results/**', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
);
