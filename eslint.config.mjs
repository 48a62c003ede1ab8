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

/**
 * A feature module reads its own tables through its own repository; another module's table is read
 * through what that module exports (a service or a small reader), never its repository (issue 28).
 * Type-only imports (row shapes) are erased and allowed. The events table is the exception by design:
 * the ledger (the global EventLedgerModule) exports its EventsRepository as the read every module shares.
 */
const REPOSITORY =
  "A feature module does not import another feature module's repository: read that module's table through a service or small reader it exports (the ledger's EventsRepository is the one shared read).";
const OTHER_REPOSITORIES = ['../*/*.repository', '../../*/*.repository', '!../ledger/events.repository', '!../../ledger/events.repository'];

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
    // No feature module imports another's repository (issue 28). src/core and src/cli have their own rules.
    files: ['src/**/*.ts'],
    ignores: ['src/core/**', 'src/cli/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ group: OTHER_REPOSITORIES, message: REPOSITORY, allowTypeImports: true }] }] },
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
