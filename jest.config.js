/**
 * Test tiers, each a jest project that runs alone (`npm run test:<tier>`);
 * `npm test` runs them all.
 *   unit         `*.spec.ts`: pure and in-process; no database, no server, no child process
 *   medium       `*.medium-spec.ts`: services and storage on both databases (SQLite, PostgreSQL)
 *   e2e          `*.e2e-spec.ts` outside test/reliability and test/browser: the app over HTTP, the CLI as a child process
 *   reliability  test/reliability/*.e2e-spec.ts: faults, attacks, concurrency, crashes
 *   browser      test/browser/*.e2e-spec.ts: pages in Debian's headless Chromium
 * @type {import('jest').Config}
 */
const transform = {
  '^.+\\.ts$': [
    'ts-jest',
    {
      // tsconfig.jest.json = tsconfig.json + isolatedModules, so ts-jest uses
      // fast per-file transpileModule (no type-check). Full type-checking is
      // `npm run typecheck` (tsc --noEmit), which CI runs before jest.
      tsconfig: '<rootDir>/tsconfig.jest.json',
      diagnostics: false,
    },
  ],
};

const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform,
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};
const ignored = ['/node_modules/', '/dist/'];
/** Tiers that start databases, servers and processes: 30 s a test (test/helpers/slow-tiers.ts). */
const slow = { setupFilesAfterEnv: ['<rootDir>/test/helpers/slow-tiers.ts'] };

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.spec.ts'], testPathIgnorePatterns: ignored },
    { ...common, ...slow, displayName: 'medium', testMatch: ['**/*.medium-spec.ts'], testPathIgnorePatterns: ignored },
    { ...common, ...slow, displayName: 'e2e', testMatch: ['**/*.e2e-spec.ts'], testPathIgnorePatterns: [...ignored, '<rootDir>/test/reliability/', '<rootDir>/test/browser/'] },
    { ...common, ...slow, displayName: 'reliability', testMatch: ['<rootDir>/test/reliability/**/*.e2e-spec.ts'], testPathIgnorePatterns: ignored },
    { ...common, ...slow, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.e2e-spec.ts'], testPathIgnorePatterns: ignored },
  ],
};
