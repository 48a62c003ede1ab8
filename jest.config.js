/**
 * Test tiers, each a jest project that runs alone (`npm run test:<tier>`);
 * `npm test` runs them all.
 *   unit         `*.spec.ts`: pure and in-process; no database, no server, no child process
 *   medium       `*.medium-spec.ts`: services and storage on both databases (SQLite, PostgreSQL)
 *   e2e          `*.e2e-spec.ts` outside test/reliability and test/browser: the app over HTTP, the CLI as a child process
 *   reliability  test/reliability/*.e2e-spec.ts: faults, attacks, concurrency, crashes
 *   reliability-alone  the reliability suites in ALONE below: they need the machine to themselves
 *   browser      test/browser/*.e2e-spec.ts: pages in Debian's headless Chromium
 * `npm test` (scripts/test-all.sh) runs every tier two suites at a time, then reliability-alone one at a time.
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
/**
 * Reliability suites whose checks hold only on a machine that runs nothing else: a latency bound
 * (health-under-heavy-reads, body-limit, webhooks-crash), a race against a server-side time limit
 * (read-budgets' 1 s stall limit, slots-streams' 15 s slot release and 1 s answer), requests that must
 * arrive within one 300 ms group-commit wait (group-commit, attack-group-commit), or a private Redis
 * killed and restarted mid-batch with a bound on what completes meanwhile (queue-faults). A new suite
 * with such a check goes here; every other suite runs beside another.
 */
const ALONE = [
  'attack-group-commit',
  'body-limit',
  'group-commit',
  'health-under-heavy-reads',
  'queue-faults',
  'read-budgets',
  'slots-streams-webhooks-signing-under-attack',
  'webhooks-crash',
].map((name) => `<rootDir>/test/reliability/${name}.e2e-spec.ts`);

/** Tiers that start databases, servers and processes: 30 s a test (test/helpers/slow-tiers.ts). */
const slow = { setupFilesAfterEnv: ['<rootDir>/test/helpers/slow-tiers.ts'] };

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.spec.ts'], testPathIgnorePatterns: ignored },
    { ...common, ...slow, displayName: 'medium', testMatch: ['**/*.medium-spec.ts'], testPathIgnorePatterns: ignored },
    { ...common, ...slow, displayName: 'e2e', testMatch: ['**/*.e2e-spec.ts'], testPathIgnorePatterns: [...ignored, '<rootDir>/test/reliability/', '<rootDir>/test/browser/'] },
    { ...common, ...slow, displayName: 'reliability', testMatch: ['<rootDir>/test/reliability/**/*.e2e-spec.ts'], testPathIgnorePatterns: [...ignored, ...ALONE] },
    { ...common, ...slow, displayName: 'reliability-alone', testMatch: ALONE },
    { ...common, ...slow, displayName: 'browser', testMatch: ['<rootDir>/test/browser/**/*.e2e-spec.ts'], testPathIgnorePatterns: ignored },
  ],
};
