// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const FORBIDDEN_IN_AER1 = [
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
    files: ['src/aer1/**', 'src/core/**', 'src/coverage/reconcile.ts', 'src/coverage/plan.ts', 'src/coverage/canonical.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: FORBIDDEN_IN_AER1.map((name) => ({
            name,
            message: 'src/aer1 and src/core are pure TypeScript: no framework, DB, queue or I/O imports.',
          })),
          patterns: [
            {
              group: ['@nestjs/*', 'typeorm/*', 'bullmq/*', 'ioredis/*', 'pg/*', 'better-sqlite3/*'],
              message: 'src/aer1 and src/core are pure TypeScript: no framework, DB, queue or I/O imports.',
            },
          ],
        },
      ],
    },
  },
);
