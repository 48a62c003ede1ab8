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

/** Packages of the server (framework, database, queue, HTTP) that neither the offline CLI nor a unit test may load. */
const SERVER_PACKAGES = ['@nestjs/*', 'typeorm', 'typeorm/*', 'pg', 'pg/*', 'better-sqlite3', 'bullmq', 'ioredis', 'express', '@bull-board/*', 'nestjs-pino', 'pino-http', 'helmet'];

/** The server's feature folders under src/ (the CLI reaches core, its own folder, witness/, timestamp/ and common/package-root). */
const SERVER_FOLDERS = ['app.module', 'app.factory', 'main', 'worker', 'ledger-cli', 'auth', 'badges', 'config', 'coverage', 'database', 'evidence', 'health', 'ledger', 'log', 'metrics', 'outcomes', 'public-pages', 'receipts', 'timelines', 'verification-queue', 'webhooks', 'workflows'];
const CLI =
  'aer1 is an offline verifier, not the server: it imports core and its own folder; a command that needs the database loads it with a lazy import() for that command alone.';

const UNIT =
  'A unit test (*.spec.ts) is pure and in-process: no database, no server, no child process. Name it *.medium-spec.ts (database) or *.e2e-spec.ts (server, child process).';

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
  {
    // The offline CLI loads none of the server (issue 28). Type-only imports are erased and allowed.
    files: ['src/cli/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: SERVER_PACKAGES, message: CLI, allowTypeImports: true },
            { group: [...SERVER_FOLDERS.flatMap((f) => [`../${f}`, `../${f}/*`, `../../${f}`, `../../${f}/*`]), '../../migrations/*', '../../../migrations/*'], message: CLI, allowTypeImports: true },
          ],
        },
      ],
    },
  },
  {
    // The unit tier runs alone in under a minute: nothing that starts a database, a server or a process.
    files: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['child_process', 'node:child_process', 'pg', 'better-sqlite3', 'supertest', 'ioredis', 'bullmq', 'playwright-core', 'worker_threads', 'node:worker_threads'].map((name) => ({ name, message: UNIT })),
          patterns: [{ group: ['**/helpers/app', '**/medium/harness', '**/helpers/openssl-tsa', '**/helpers/pdf-text'], message: UNIT }],
        },
      ],
    },
  },
  {
    // A migration is frozen history: it imports nothing of today's application code.
    files: ['migrations/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/src', '**/src/*', '**/src/**'], message: 'A migration is frozen history: it imports nothing from src/ (copy what it needs into migrations/frozen/, as of its release).' }] },
      ],
    },
  },
);
