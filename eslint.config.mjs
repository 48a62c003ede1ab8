// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const FORBIDDEN_IN_CORE = [
  'typeorm',
  'bullmq',
  'ioredis',
  'fs',
  'node:fs',
  'fs/promises',
  'node:fs/promises',
  'net',
  'node:net',
  'http',
  'node:http',
  'pg',
  'better-sqlite3',
];

const PURE = 'src/core is pure TypeScript: no framework, DB, queue, network, file or driver imports.';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/out/**'],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node, ...globals.jest },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The pure domain core must not depend on frameworks or I/O.
    files: ['src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: FORBIDDEN_IN_CORE.map((name) => ({
            name,
            message: PURE,
          })),
          patterns: [
            {
              group: ['@nestjs/*', 'typeorm/*', 'bullmq/*', 'ioredis/*', 'pg/*', 'better-sqlite3/*'],
              message: PURE,
            },
          ],
        },
      ],
    },
  },
);
