/**
 * The offline verifier is not the server: `aer1 verify`, `aer1 verify-pack`,
 * `aer1 log verify-proof` and `aer1 --version` load no module of Nest,
 * TypeORM, the database drivers, BullMQ, Express or the migrations, and no
 * server folder of src/. Measured on the built CLI (dist/), the way auditors
 * run it, by recording every module the process resolves.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const AER1 = join(ROOT, 'bin', 'aer1');

/** Server-side code the CLI must not load for an offline check. */
const FORBIDDEN = [
  /node_modules\/@nestjs\//,
  /node_modules\/typeorm\//,
  /node_modules\/better-sqlite3\//,
  /node_modules\/pg\//,
  /node_modules\/bullmq\//,
  /node_modules\/ioredis\//,
  /node_modules\/express\//,
  /dist\/migrations\//,
  /dist\/src\/(database|ledger|log|receipts|timelines|workflows|coverage|outcomes|evidence|webhooks|auth|public-pages|verification-queue|health|metrics|badges)\//,
];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'aer1-startup-'));
  // Records every resolved module file when the process exits.
  writeFileSync(
    join(dir, 'record.js'),
    `const M = require('module'); const seen = new Set(); const load = M._load;
M._load = function (req, parent, isMain) { try { seen.add(M._resolveFilename(req, parent, isMain)); } catch {} return load.apply(this, arguments); };
process.on('exit', () => require('fs').writeFileSync(process.env.AER1_MODULES_OUT, [...seen].join('\\n')));`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function loaded(args: string[]): { status: number | null; modules: string[]; stderr: string } {
  const out = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  const r = spawnSync(process.execPath, ['--require', join(dir, 'record.js'), AER1, ...args], { cwd: ROOT, env: { ...process.env, AER1_MODULES_OUT: out }, encoding: 'utf8' });
  return { status: r.status, modules: readFileSync(out, 'utf8').split('\n').filter(Boolean), stderr: r.stderr };
}

describe('aer1 loads none of the server', () => {
  it.each([
    [['--version']],
    [['verify', 'examples/receipt-core.json']],
    [['verify', '--json', 'examples/timeline-eight.json']],
    [['verify-pack', '--help']],
    [['log', 'verify-proof', '--help']],
    [['coverage', '--help']],
  ])('aer1 %j', (args) => {
    const r = loaded(args);
    expect(r.stderr).not.toMatch(/Error:/);
    expect(r.modules.length).toBeGreaterThan(10); // the recorder saw the CLI's own modules
    expect(r.modules.some((m) => m.includes('dist/src/cli/main.js'))).toBe(true);
    const bad = r.modules.filter((m) => FORBIDDEN.some((re) => re.test(m)));
    expect(bad).toEqual([]);
  });

  it('the MCP SDK and the gateway load only when aer1 gateway runs (not for verify, nor for its help)', () => {
    for (const args of [['verify', 'examples/receipt-core.json'], ['gateway', '--help']]) {
      const r = loaded(args);
      expect(r.modules.some((m) => m.includes('dist/src/cli/main.js'))).toBe(true);
      expect(r.modules.filter((m) => /node_modules\/@modelcontextprotocol\/|dist\/src\/cli\/gateway\//.test(m))).toEqual([]);
    }
  });

  it('the recorder does see the server code where a command needs it (aer1 ledger verify --database loads it lazily)', () => {
    const r = loaded(['ledger', 'verify', '--database', join(dir, 'none.sqlite')]);
    expect(r.modules.some((m) => /dist\/src\/ledger\/offline-verify\.js$/.test(m))).toBe(true);
  });
});
