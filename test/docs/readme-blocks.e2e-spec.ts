/**
 * The README's examples run as pasted. Every shell block marked runnable in README.md, that is preceded by
 * the line `<!-- runnable -->` (optionally `<!-- runnable id=NAME -->`, or `<!-- runnable after=NAME -->` for
 * a block that uses what a later block makes: it runs right after block NAME), is run in README order, in
 * one bash session (`set -e -o pipefail`), from the checkout as the README says, against the built service
 * started here on a temp SQLite database (its signing key created beside it) and a free port. The session
 * has what the README tells a user on another port to set: `AER1_SERVER`, `PUBLIC_BASE_URL` on the server,
 * and that address in place of `http://localhost:3000` in the examples; and `DATABASE_URL`, which
 * `npm run ledger` shares with the server. Its temp files (`mktemp`) go to a temp dir removed afterwards.
 *
 * A command whose comment says `exit N` (`# exit 1: ...`, `# readable report; exit 1 here`) with N other than 0 is asserted to exit exactly N (the README's
 * word, checked); every other command must exit 0. A failure names the block (its section and README line)
 * and shows the block's output. After the run no file is new in the checkout.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ServerProcess } from '../reliability/helpers';

const REPO = join(__dirname, '../..');
const README = join(REPO, 'README.md');

/** One marked block of README.md. */
export interface Block {
  /** 1-based README line of its first command line. */
  line: number;
  /** The nearest markdown heading above it. */
  section: string;
  id?: string;
  after?: string;
  /** The block's text, dedented to its fence. */
  text: string;
}

const MARKER = /^\s*<!--\s*runnable(?:\s+(id|after)=([\w-]+))?\s*-->\s*$/;

/** The runnable blocks of a markdown text, in document order. Throws on a marker not followed by a sh block. */
export function runnableBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let section = '(top)';
  let inFence = false;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^\s*```/.test(l)) inFence = !inFence;
    else if (!inFence && /^#{1,6} /.test(l)) section = l.replace(/^#+ /, '');
    const m = MARKER.exec(l);
    if (!m || inFence) continue;
    const fence = /^(\s*)```(sh|bash)\s*$/.exec(lines[i + 1] ?? '');
    if (!fence) throw new Error(`README.md:${i + 1}: a runnable marker must be followed by a \`\`\`sh or \`\`\`bash block`);
    const indent = fence[1].length;
    const body: string[] = [];
    let j = i + 2;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(Math.min(indent, lines[j].length - lines[j].trimStart().length)));
    if (j === lines.length) throw new Error(`README.md:${i + 2}: the block never closes`);
    blocks.push({ line: i + 3, section, ...(m[1] === 'id' ? { id: m[2] } : m[1] === 'after' ? { after: m[2] } : {}), text: body.join('\n') });
  }
  return blocks;
}

/** The blocks in run order: README order, a block with `after=NAME` right after block NAME. */
export function runOrder(blocks: Block[]): Block[] {
  const ids = new Set(blocks.map((b) => b.id).filter(Boolean));
  for (const b of blocks) if (b.after && !ids.has(b.after)) throw new Error(`README.md:${b.line}: runnable after=${b.after}: no block has id=${b.after}`);
  const out: Block[] = [];
  const place = (b: Block): void => {
    out.push(b);
    for (const d of blocks) if (b.id && d.after === b.id) place(d);
  };
  for (const b of blocks) if (!b.after) place(b);
  return out;
}

/**
 * A block's text with each command whose trailing comment says `exit N` (N > 0) wrapped so that exactly N is
 * asserted. A command is that line and the lines before it that end with a backslash.
 */
export function withExitAssertions(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*[^#\s].*?\s#[^#]*\bexit (\d+)\b/.exec(lines[i]);
    if (!m || m[1] === '0') {
      out.push(lines[i]);
      continue;
    }
    const cmd: string[] = [lines[i]];
    while (out.length > 0 && /\\\s*$/.test(out[out.length - 1])) cmd.unshift(out.pop() as string);
    const n = m[1];
    out.push(
      `if {`,
      ...cmd,
      `}; then __rc=0; else __rc=$?; fi`,
      `if [ "$__rc" != ${n} ]; then echo "README: expected exit ${n}, got exit $__rc: ${cmd.join(' ').replace(/["$`\\]/g, '.').slice(0, 160)}"; exit 1; fi`,
    );
  }
  return out.join('\n');
}

/**
 * `npx --no-install aer1 ARGS` and `npm run [--silent] SCRIPT [-- ARGS]` as what they resolve to in the
 * checkout (`node bin/aer1 ARGS`; the package.json script line run by sh with ARGS appended, as npm runs it):
 * each start of npm costs about 2 s of CPU, some 60 s over the README. The test checks once, with npm itself,
 * that both resolve so in the checkout. Any other npm or npx command is refused.
 */
export const LAUNCHERS = `
npx() {
  if [ "$1" != --no-install ] || [ "$2" != aer1 ]; then echo "README: npx $* is not npx --no-install aer1"; return 2; fi
  shift 2; node bin/aer1 "$@"
}
npm() {
  if [ "$1" != run ]; then echo "README: npm $* is not npm run"; return 2; fi
  shift; if [ "$1" = --silent ]; then shift; fi
  local name=$1; shift; if [ "\${1:-}" = -- ]; then shift; fi
  local line; line=$(node -p 'require("./package.json").scripts[process.argv[1]] ?? ""' "$name")
  if [ -z "$line" ]; then echo "README: npm run $name: no such script"; return 2; fi
  sh -c "$line"' "$@"' "npm run $name" "$@"
}
`;

/** The bash script: the blocks in run order, each announced by a `@@block k` line on the merged output. */
export function sessionScript(blocks: Block[], base: string): string {
  const parts = ['set -e -o pipefail', 'exec 2>&1', LAUNCHERS];
  blocks.forEach((b, k) => {
    parts.push(`printf '\\n@@block %s\\n' ${k}`, withExitAssertions(b.text.split('http://localhost:3000').join(base)));
  });
  parts.push(`printf '\\n@@done\\n'`);
  return `${parts.join('\n')}\n`;
}

/** The checkout's files git does not track, ignored ones too (dist/ aside: the build rewrites it). */
function untracked(): Set<string> {
  const r = spawnSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all'], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git status: ${r.stderr}`);
  return new Set(r.stdout.split('\n').filter((l) => l && !/^.. dist\//.test(l)));
}

/** Runs a bash script text; exit status and merged output. */
function bash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): { status: number | null; out: string } {
  const file = join(env.TMPDIR, `session-${Date.now()}.sh`);
  writeFileSync(file, script);
  const r = spawnSync('bash', [file], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? `\n(${r.error.message})` : ''}` };
}

describe('README: the runnable blocks', () => {
  it('finds the marked blocks, in an order where each runs after what it uses', () => {
    const readme = readFileSync(README, 'utf8');
    // the local CLI only: `npx aer1` outside the checkout would fetch a registry package of that name
    expect(readme.split('\n').filter((l) => /npx (?!--no-install aer1\b)\S*\s*aer1\b/.test(l))).toEqual([]);
    const order = runOrder(runnableBlocks(readme));
    const sections = order.map((b) => b.section);
    expect(sections.length).toBeGreaterThanOrEqual(10);
    expect(sections[0]).toBe('Try it');
    const walk = sections.indexOf('Coverage plans and reports');
    expect(sections.slice(walk + 1, walk + 3)).toEqual(['Evidence packs: from a report to an offline check', 'Who stands behind an endpoint commitment']);
  });

  it('checks the exit status a command comment announces', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'readme-exit-'));
    try {
      const run = (text: string): { status: number | null; out: string } => bash(`set -e -o pipefail\nexec 2>&1\n${withExitAssertions(text)}\necho reached\n`, tmp, { PATH: process.env.PATH ?? '', TMPDIR: tmp }, 10_000);
      expect(run('false   # exit 1: as announced')).toEqual({ status: 0, out: 'reached\n' });
      expect(run('echo a \\\n  b; (exit 2)   # exit 2 here')).toEqual({ status: 0, out: 'a b\nreached\n' });
      const ok = run('true   # exit 1: announced, but it passed');
      expect(ok.status).toBe(1);
      expect(ok.out).toContain('README: expected exit 1, got exit 0');
      const other = run('(exit 2)   # exit 1');
      expect(other.status).toBe(1);
      expect(other.out).toContain('README: expected exit 1, got exit 2');
      expect(run('false   # exit 0').status).toBe(1);
      expect(run('false').status).toBe(1);
      expect(run('# a comment that says exit 1\nfalse').status).toBe(1);
      expect(run('false   # a report; exit 1 here: INCOMPLETE').status).toBe(0);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('npx --no-install aer1 and npm run resolve in the checkout as the session runs them', () => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir() };
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const npx = spawnSync('npx', ['--no-install', 'aer1', '--version'], { cwd: REPO, env, encoding: 'utf8', timeout: 60_000 });
    expect({ status: npx.status, out: npx.stdout }).toEqual({ status: 0, out: `${version}\n` });
    const direct = spawnSync(process.execPath, ['bin/aer1', '--version'], { cwd: REPO, env, encoding: 'utf8' });
    expect(direct.stdout).toBe(`${version}\n`);
    const npm = spawnSync('npm', ['run', '--silent', 'ledger', '--', 'create-key', '--help'], { cwd: REPO, env, encoding: 'utf8', timeout: 60_000 });
    expect(npm.status).toBe(0);
    expect(npm.stdout).toContain('Usage: ledger create-key');
  }, 120_000);

  it('run as pasted against the service, and leave no file in the checkout', async () => {
    const blocks = runOrder(runnableBlocks(readFileSync(README, 'utf8')));
    const tmp = mkdtempSync(join(tmpdir(), 'readme-blocks-'));
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const databaseUrl = `sqlite:${join(tmp, 'ledger.sqlite')}`;
    const server = await ServerProcess.start({ PORT: String(port), PUBLIC_BASE_URL: base, DATABASE_URL: databaseUrl }, 60_000);
    try {
      const before = untracked();
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmp, TMPDIR: tmp, AER1_SERVER: base, DATABASE_URL: databaseUrl };
      const r = bash(sessionScript(blocks, base), REPO, env, 420_000);
      if (!r.out.includes('\n@@done\n')) {
        const marks = [...r.out.matchAll(/\n@@block (\d+)\n/g)];
        const last = marks[marks.length - 1];
        const b = last ? blocks[Number(last[1])] : undefined;
        const where = b ? `the block at README.md:${b.line} (section "${b.section}")` : 'before the first block';
        const output = last ? r.out.slice((last.index ?? 0) + last[0].length) : r.out;
        throw new Error(`README example failed (exit ${r.status}) in ${where}:\n${output.slice(-6000)}\n--- server stderr:\n${server.stderr.text.slice(-2000)}`);
      }
      expect(r.status).toBe(0);
      expect(r.out).toMatch(/\d+ passed, 0 failed/); // aer1 conformance
      expect(r.out).toContain('digest MATCHES'); // aer1 coverage --check-report
      expect(r.out).toContain('Result: VERIFIED'); // aer1 log verify-proof, aer1 verify-pack
      const added = [...untracked()].filter((l) => !before.has(l));
      expect(added).toEqual([]);
    } finally {
      await server.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 500_000);
});
