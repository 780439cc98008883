// Type-aware linting: the async rules catch promises that are dropped or passed
// where a callback's return value is ignored, the usual source of lost writes.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint/layers.js';
import tables from './eslint/tables.js';

/** Every file of the sessions feature but its public face and wire schemas. */
const SESSIONS_INSIDES = ['**/sessions/sessions.*', '!**/sessions/sessions.api.js', '!**/sessions/sessions.schema.js', '!**/sessions/sessions.route-schema.js', '!**/sessions/sessions.blocker-schema.js'];
const SESSIONS_RULE = 'Import sessions through src/features/sessions/sessions.api.ts (or its wire schemas) only.';

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
    // The layers, the feature order and the tables' owners of docs/architecture.md.
    files: ['src/**/*.ts'],
    plugins: { focus: { rules: { ...layers.rules, ...tables.rules } } },
    rules: { 'focus/layers': 'error', 'focus/table-owners': 'error' },
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
    // The charter's limits (issue 35, item 6): files under 300 lines, functions under 80.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/**/*.test-helpers.ts'],
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // Sessions are used through their one public file (and the wire schemas): other
    // features, the app, server, CLI and bench never reach into its insides (docs/architecture.md).
    files: ['src/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
    ignores: ['src/features/sessions/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: SESSIONS_INSIDES, message: SESSIONS_RULE }] }] },
  },
  {
    // Tests may also use the sessions' test helpers.
    files: ['**/*.test.ts', 'src/**/*.test-helpers.ts', 'test/**/*.ts'],
    ignores: ['src/features/sessions/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: [...SESSIONS_INSIDES, '!**/sessions/sessions.test-helpers.js'], message: SESSIONS_RULE }] }] },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
