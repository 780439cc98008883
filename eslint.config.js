// Type-aware linting: the async rules catch promises that are dropped or passed
// where a callback's return value is ignored, the usual source of lost writes.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import focus from './eslint/layers.js';

export default tseslint.config(
  // The typed client's types are generated (npm run client:generate).
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bench/results/', '.scratch/', '.vitest-tmp/', 'clients/typescript/schema.d.ts', 'clients/typescript/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The layers and the feature order of docs/architecture.md.
    files: ['src/**/*.ts'],
    plugins: { focus },
    rules: { 'focus/layers': 'error' },
  },
  {
    // Fastify plugins are async by convention even when they register synchronously.
    files: ['src/**/*.routes.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Tests read untyped JSON responses on purpose; the wire types are checked in src/.
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts', 'src/**/*.test-helpers.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
