/**
 * scripts/test-prereqs.sh (`npm test`'s pretest step and .ci/run): starts PostgreSQL and Redis when they
 * are down with .ci/run's commands, installs Debian's chromium when it is missing and we are root, and
 * otherwise fails at once with one clear line. Run here with stand-ins for the system commands (first on
 * PATH; each records its arguments) and, for the install branch, with /usr/bin/chromium pointed at a path
 * in a temp dir (this machine has the real one, which a test must not remove).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = join(__dirname, '../../scripts/test-prereqs.sh');
const BASH = spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();

interface World {
  dir: string;
  bin: string;
  calls: string;
  /** The browser path the script checks (a file in the temp dir). */
  chromium: string;
}

/** A stand-in command: appends `name args` to the calls file, then runs `body` (bash). */
function stub(w: World, name: string, body: string): void {
  const file = join(w.bin, name);
  writeFileSync(file, `#!/usr/bin/env bash\necho "${name} $*" >> "${w.calls}"\n${body}\n`);
  chmodSync(file, 0o755);
}

function world(opts: { pg: boolean; redis: boolean; chromium: boolean }): World {
  const dir = mkdtempSync(join(tmpdir(), 'prereqs-'));
  const w: World = { dir, bin: join(dir, 'bin'), calls: join(dir, 'calls'), chromium: join(dir, 'chromium') };
  spawnSync('mkdir', ['-p', w.bin]);
  writeFileSync(w.calls, '');
  if (opts.pg) writeFileSync(join(dir, 'pg.up'), '');
  if (opts.redis) writeFileSync(join(dir, 'redis.up'), '');
  stub(w, 'pg_isready', `[ -e "${dir}/pg.up" ]`);
  stub(w, 'pg_ctlcluster', `touch "${dir}/pg.up"`);
  stub(w, 'redis-cli', `[ -e "${dir}/redis.up" ] && echo PONG || { echo "Could not connect" >&2; exit 1; }`);
  stub(w, 'redis-server', `touch "${dir}/redis.up"`);
  if (opts.chromium) installChromium(w);
  return w;
}

function installChromium(w: World): void {
  writeFileSync(w.chromium, '#!/usr/bin/env bash\necho "Chromium 1.2.3 stand-in"\n');
  chmodSync(w.chromium, 0o755);
}

/** The script with /usr/bin/chromium replaced by the world's path; exit status, output and recorded calls. */
function run(w: World, env: Record<string, string> = {}): { status: number | null; out: string; calls: string[]; ms: number } {
  const script = join(w.dir, 'test-prereqs.sh');
  writeFileSync(script, readFileSync(SCRIPT, 'utf8').split('/usr/bin/chromium').join(w.chromium));
  const t0 = Date.now();
  const r = spawnSync(BASH, [script], {
    env: { PATH: `${w.bin}:${process.env.PATH}`, HOME: w.dir, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const calls = readFileSync(w.calls, 'utf8').split('\n').filter(Boolean);
  return { status: r.status, out: `${r.stdout}${r.stderr}`, calls, ms: Date.now() - t0 };
}

describe('scripts/test-prereqs.sh', () => {
  const worlds: World[] = [];
  const make = (o: Parameters<typeof world>[0]): World => {
    const w = world(o);
    worlds.push(w);
    return w;
  };
  afterAll(() => worlds.forEach((w) => rmSync(w.dir, { recursive: true, force: true })));

  it('all ready: exit 0, starts and installs nothing', () => {
    const w = make({ pg: true, redis: true, chromium: true });
    const r = run(w);
    expect(r.status).toBe(0);
    expect(r.calls.filter((c) => /^(pg_ctlcluster|redis-server|apt-get)/.test(c))).toEqual([]);
    expect(r.out).toContain('PostgreSQL and Redis are up');
    expect(r.out).toContain('Chromium 1.2.3 stand-in');
  });

  it('PostgreSQL and Redis down: starts them with the commands .ci/run used, then exit 0', () => {
    const w = make({ pg: false, redis: false, chromium: true });
    const r = run(w);
    expect(r.status).toBe(0);
    const cluster = spawnSync('bash', ['-c', 'ls /etc/postgresql 2>/dev/null | sort -V | tail -1'], { encoding: 'utf8' }).stdout.trim();
    expect(r.calls).toContain(`pg_ctlcluster --skip-systemctl-redirect ${cluster} main start`);
    expect(r.calls).toContain('redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save  --appendonly no');
    expect(existsSync(join(w.dir, 'pg.up')) && existsSync(join(w.dir, 'redis.up'))).toBe(true);
  });

  it('chromium missing, root: apt-get update and install chromium, then exit 0', () => {
    const w = make({ pg: true, redis: true, chromium: false });
    stub(w, 'id', 'echo 0');
    stub(w, 'apt-get', `[ "$1" = install ] && { cat > "${w.chromium}" <<'X'\n#!/usr/bin/env bash\necho "Chromium 9 from apt"\nX\nchmod +x "${w.chromium}"; }; exit 0`);
    const r = run(w);
    expect(r.status).toBe(0);
    expect(r.calls.filter((c) => c.startsWith('apt-get'))).toEqual(['apt-get update -qq', 'apt-get install -y -qq chromium']);
    expect(r.out).toContain('Chromium 9 from apt');
  });

  it('chromium missing, not root: fails at once, naming the command to run, and installs nothing', () => {
    const w = make({ pg: true, redis: true, chromium: false });
    stub(w, 'id', 'echo 1000');
    stub(w, 'apt-get', 'exit 0');
    const r = run(w);
    expect(r.status).toBe(1);
    expect(r.out).toContain(`test prerequisites: ${w.chromium} is missing and only root can install it: run 'sudo apt-get install -y chromium' once`);
    expect(r.calls.filter((c) => c.startsWith('apt-get'))).toEqual([]);
    expect(r.ms).toBeLessThan(10_000);
  });

  it('chromium missing, apt unreachable: fails at once with the reason', () => {
    const w = make({ pg: true, redis: true, chromium: false });
    stub(w, 'id', 'echo 0');
    stub(w, 'apt-get', 'echo "E: Could not resolve deb.debian.org" >&2; exit 100');
    const r = run(w);
    expect(r.status).toBe(1);
    expect(r.out).toContain('E: Could not resolve deb.debian.org');
    expect(r.out).toContain('test prerequisites: apt-get update failed');
    expect(r.calls.filter((c) => c.startsWith('apt-get'))).toEqual(['apt-get update -qq']);
  });

  it('a CHROMIUM_PATH that does not exist: fails at once, installs nothing', () => {
    const w = make({ pg: true, redis: true, chromium: true });
    stub(w, 'apt-get', 'exit 0');
    const r = run(w, { CHROMIUM_PATH: join(w.dir, 'nowhere') });
    expect(r.status).toBe(1);
    expect(r.out).toContain(`test prerequisites: CHROMIUM_PATH=${join(w.dir, 'nowhere')} is not an executable file`);
    expect(r.calls.filter((c) => c.startsWith('apt-get'))).toEqual([]);
  });

  it('SKIP_BROWSER_TESTS=1: no browser needed', () => {
    const w = make({ pg: true, redis: true, chromium: false });
    stub(w, 'apt-get', 'exit 0');
    const r = run(w, { SKIP_BROWSER_TESTS: '1' });
    expect(r.status).toBe(0);
    expect(r.calls.filter((c) => c.startsWith('apt-get'))).toEqual([]);
  });

  it('PostgreSQL not installed: fails at once, saying so', () => {
    const w = make({ pg: true, redis: true, chromium: true });
    rmSync(join(w.bin, 'pg_isready'));
    // a PATH of the stand-ins alone (the script stops before it needs any other command)
    const r = run(w, { PATH: w.bin });
    expect(r.status).toBe(1);
    expect(r.out).toContain('test prerequisites: pg_isready not found: install PostgreSQL');
  });

  it('is what `npm test` runs first and what .ci/run runs', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.pretest).toBe('bash scripts/test-prereqs.sh && npm run build --silent');
    expect(readFileSync(join(__dirname, '../../.ci/run'), 'utf8')).toMatch(/^bash scripts\/test-prereqs\.sh$/m);
  });
});
