/**
 * scripts/check-start.sh (.ci/run, after the build): the README's `npm ci && npm start` serves with no
 * setup. Run against the real build, and against stand-in servers (a copy of the script in a temp folder
 * with its own dist/src/main.js) for the two ways it must fail: the server exits, or /health never
 * answers 200 in time.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild } from '../reliability/helpers';

const SCRIPT = join(__dirname, '../../scripts/check-start.sh');

function runCopy(main: string, env: Record<string, string> = {}): { status: number | null; out: string; ms: number } {
  const repo = mkdtempSync(join(tmpdir(), 'check-start-'));
  try {
    mkdirSync(join(repo, 'scripts'));
    mkdirSync(join(repo, 'dist/src'), { recursive: true });
    cpSync(SCRIPT, join(repo, 'scripts/check-start.sh'));
    writeFileSync(join(repo, 'dist/src/main.js'), main);
    const t0 = Date.now();
    const r = spawnSync('bash', [join(repo, 'scripts/check-start.sh')], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
    return { status: r.status, out: `${r.stdout}${r.stderr}`, ms: Date.now() - t0 };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

describe('scripts/check-start.sh', () => {
  it('the built service starts with no configuration, on SQLite in ./data/, and answers /health 200', () => {
    requireBuild();
    const r = spawnSync('bash', [SCRIPT], { encoding: 'utf8', timeout: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const health = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))) as { status: string; details: { database: { dialect: string; status: string } } };
    expect(health.status).toBe('ok');
    expect(health.details.database).toEqual({ dialect: 'sqlite', status: 'up' });
  }, 130_000);

  it('a server that exits fails the check at once, with its output', () => {
    const r = runCopy('console.error("boom: cannot open the database"); process.exit(3);');
    expect(r.status).toBe(1);
    expect(r.out).toContain('check-start: node dist/src/main.js exited (3) before GET /health answered 200');
    expect(r.out).toContain('boom: cannot open the database');
    expect(r.ms).toBeLessThan(20_000);
  });

  it('a server whose /health is not 200 fails the check after START_TIMEOUT_S, with the last status', () => {
    const main = `require('node:http').createServer((q, a) => { a.statusCode = 503; a.end('{"status":"error"}'); }).listen(Number(process.env.PORT), '127.0.0.1');`;
    const r = runCopy(main, { START_TIMEOUT_S: '2' });
    expect(r.status).toBe(1);
    expect(r.out).toContain('check-start: GET /health did not answer 200 within 2 s (last: 503)');
    expect(r.ms).toBeLessThan(20_000);
  });

  it('is run by .ci/run after the build and before the tests', () => {
    const ci = readFileSync(join(__dirname, '../../.ci/run'), 'utf8');
    const at = (s: string): number => ci.indexOf(s);
    expect(at('\nbash scripts/check-start.sh\n')).toBeGreaterThan(at('\nnpm run build\n'));
    expect(at('\nnpm test\n')).toBeGreaterThan(at('\nbash scripts/check-start.sh\n'));
    expect(at('\nnpm run build\n')).toBeGreaterThan(0);
  });
});
