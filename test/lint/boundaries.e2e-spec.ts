/**
 * The dependency rules of `npm run lint` (eslint.config.mjs) fail on a
 * forbidden import. Each case plants a file in a temporary copy of the
 * project's layout (the real eslint.config.mjs, node_modules linked), at a
 * path the rule covers; one `eslint --format json` run lints them all. Every
 * forbidden case must carry the rule's error, every allowed one none.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

const FORBIDDEN: [string, string, string][] = [
  ['src/core/planted-typeorm.ts', "import { DataSource } from 'typeorm';\nexport const x = DataSource;\n", 'no-restricted-imports'],
  ['src/core/planted-fs.ts', "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n", 'no-restricted-imports'],
  ['src/cli/planted-nest.ts', "import { Injectable } from '@nestjs/common';\nexport const x = Injectable;\n", '@typescript-eslint/no-restricted-imports'],
  ['src/cli/commands/planted-ledger.ts', "import { verifyLedgerDatabase } from '../../ledger/offline-verify';\nexport const x = verifyLedgerDatabase;\n", '@typescript-eslint/no-restricted-imports'],
  ['src/cli/planted-db.ts', "import { DatabaseService } from '../database/database.service';\nexport const x = DatabaseService;\n", '@typescript-eslint/no-restricted-imports'],
  ['src/cli/commands/planted-migration.ts', "import { m } from '../../../migrations/sqlite/x';\nexport const x = m;\n", '@typescript-eslint/no-restricted-imports'],
  ['migrations/sqlite/1999999999999-Planted.ts', "import { buildTree } from '../../src/log/tree-build';\nexport const x = buildTree;\n", 'no-restricted-imports'],
  ['test/planted/spawn.spec.ts', "import { spawn } from 'node:child_process';\nexport const x = spawn;\n", 'no-restricted-imports'],
  ['test/planted/app.spec.ts', "import { startApp } from '../helpers/app';\nexport const x = startApp;\n", 'no-restricted-imports'],
  ['src/badges/planted-repository.ts', "import { ReceiptsRepository } from '../receipts/receipts.repository';\nexport const x = ReceiptsRepository;\n", '@typescript-eslint/no-restricted-imports'],
  ['src/timelines/dto/planted-repository.ts', "import { PlansRepository } from '../../coverage/plans.repository';\nexport const x = PlansRepository;\n", '@typescript-eslint/no-restricted-imports'],
  // The files whose older reads were once let through (now behind readers) hold to the rule like any other.
  ['src/log/log.controller.ts', "import { CoverageReportsRepository } from '../coverage/coverage-reports.repository';\nexport const x = CoverageReportsRepository;\n", '@typescript-eslint/no-restricted-imports'],
  ['src/public-pages/timeline-view.ts', "import { TimelinesRepository } from '../timelines/timelines.repository';\nexport const x = TimelinesRepository;\n", '@typescript-eslint/no-restricted-imports'],
];

const ALLOWED: [string, string][] = [
  ['src/cli/allowed-core.ts', "import { sha256 } from '../core/aer1/sha256';\nexport const x = sha256;\n"],
  ['src/cli/commands/allowed-type.ts', "import type { CoveragePdfInput } from '../../coverage/coverage.pdf';\nexport type X = CoveragePdfInput;\n"],
  ['src/cli/commands/allowed-lazy.ts', "export const load = (): Promise<unknown> => import('../../ledger/offline-verify');\n"],
  ['migrations/sqlite/1999999999998-Allowed.ts', "import { backfillTree } from '../frozen/1764500000000-tree-backfill';\nexport const x = backfillTree;\n"],
  ['test/planted/spawn.e2e-spec.ts', "import { spawn } from 'node:child_process';\nexport const x = spawn;\n"],
  ['test/planted/app.medium-spec.ts', "import { startApp } from '../helpers/app';\nexport const x = startApp;\n"],
  ['src/receipts/allowed-own-repository.ts', "import { ReceiptsRepository } from './receipts.repository';\nexport const x = ReceiptsRepository;\n"],
  ['src/coverage/allowed-events.ts', "import { EventsRepository } from '../ledger/events.repository';\nexport const x = EventsRepository;\n"],
  ['src/coverage/allowed-row-type.ts', "import type { ReceiptRow } from '../receipts/receipts.repository';\nexport type X = ReceiptRow;\n"],
  ['src/evidence/allowed-reader.ts', "import { CoverageReads } from '../coverage/coverage-reads';\nexport const x = CoverageReads;\n"],
  ['src/timelines/dto/allowed-own.ts', "import type { CommitmentRow } from '../timelines.repository';\nexport type X = CommitmentRow;\n"],
];

interface LintResult {
  filePath: string;
  messages: { ruleId: string | null; message: string }[];
}

let results: Map<string, string[]>;
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'aer1-lint-'));
  copyFileSync(join(ROOT, 'eslint.config.mjs'), join(dir, 'eslint.config.mjs'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  for (const [file, code] of [...FORBIDDEN.map(([f, c]) => [f, c] as const), ...ALLOWED]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), code);
  }
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js'), '--format', 'json', 'src', 'test', 'migrations'], { cwd: dir, encoding: 'utf8' });
  if (!r.stdout) throw new Error(`eslint printed nothing (exit ${r.status}): ${r.stderr}`);
  results = new Map((JSON.parse(r.stdout) as LintResult[]).map((x) => [x.filePath.slice(dir.length + 1), x.messages.map((m) => `${m.ruleId}`)]));
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run lint keeps the boundaries', () => {
  it.each(FORBIDDEN)('%s is refused', (file, _code, rule) => {
    expect(results.get(file)).toContain(rule);
  });
  it.each(ALLOWED)('%s is allowed', (file) => {
    expect(results.get(file)).toEqual([]);
  });
});
