/**
 * The docs' examples run as pasted. Every shell block marked runnable in README.md and in each guide in docs/
 * (`docs/*.md`), that is preceded by the line `<!-- runnable -->` (optionally `<!-- runnable id=NAME -->`, or
 * `<!-- runnable after=NAME -->` for a block that uses what block NAME makes: it runs right after block NAME
 * when NAME is in the same file, and in document order when NAME is in a file that runs earlier), is run in
 * document order, one bash session (`set -e -o pipefail`) per file, the files in a fixed order (README.md
 * first, then the guides of DOC_ORDER, then any other docs/*.md by name), from the checkout as the docs say,
 * against one built service started here on a temp SQLite database (its signing key created beside it) and
 * a free port: a file's blocks share its shell variables, and what an earlier file recorded is on the
 * server. Each session has what Getting started tells a user on another port to set: `AER1_SERVER`,
 * `PUBLIC_BASE_URL` on the server, and that address in place of `http://localhost:3000` in the examples;
 * and `DATABASE_URL`, which `npm run ledger` shares with the server. Temp files (`mktemp`) go to a temp dir
 * removed afterwards.
 *
 * A command whose comment says `exit N` (`# exit 1: ...`, `# readable report; exit 1 here`) with N other than
 * 0 is asserted to exit exactly N (the docs' word, checked); every other command must exit 0. A failure names
 * the file and line of the block (and its section) and shows the block's output. After the run no file is
 * new in the checkout.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, ServerProcess } from '../reliability/helpers';

const REPO = join(__dirname, '../..');
const README = 'README.md';

/** The guides whose blocks run after README.md's, in this order; any other docs/*.md runs after them, by name. */
export const DOC_ORDER = ['getting-started', 'api', 'auditing', 'coverage', 'operating', 'cli', 'formats', 'development'].map((n) => `docs/${n}.md`);

/** The markdown files whose runnable blocks run, in run order (paths relative to the checkout). */
export function docFiles(): string[] {
  const all = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return [README, ...DOC_ORDER.filter((f) => all.includes(f)), ...all.filter((f) => !DOC_ORDER.includes(f)).sort()];
}

/** One marked block of a markdown file. */
export interface Block {
  /** The file it is in, relative to the checkout. */
  file: string;
  /** 1-based line of its first command line. */
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
export function runnableBlocks(markdown: string, file = README): Block[] {
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
    if (!fence) throw new Error(`${file}:${i + 1}: a runnable marker must be followed by a \`\`\`sh or \`\`\`bash block`);
    const indent = fence[1].length;
    const body: string[] = [];
    let j = i + 2;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(Math.min(indent, lines[j].length - lines[j].trimStart().length)));
    if (j === lines.length) throw new Error(`${file}:${i + 2}: the block never closes`);
    blocks.push({ file, line: i + 3, section, ...(m[1] === 'id' ? { id: m[2] } : m[1] === 'after' ? { after: m[2] } : {}), text: body.join('\n') });
  }
  return blocks;
}

/**
 * The blocks of each file in run order, the files in the order given: document order, a block with
 * `after=NAME` right after block NAME when NAME is in the same file, and in place when NAME is in an earlier
 * file (which runs before it). Throws when NAME is in no earlier or same file, or when two blocks share an id.
 */
export function runOrder(files: Block[][]): Block[][] {
  const seen = new Set<string>();
  return files.map((blocks) => {
    const ids = new Set<string>();
    for (const b of blocks) {
      if (!b.id) continue;
      if (ids.has(b.id) || seen.has(b.id)) throw new Error(`${b.file}:${b.line}: runnable id=${b.id} is used twice`);
      ids.add(b.id);
    }
    for (const b of blocks) if (b.after && !ids.has(b.after) && !seen.has(b.after)) throw new Error(`${b.file}:${b.line}: runnable after=${b.after}: no block of this file or an earlier one has id=${b.after}`);
    const out: Block[] = [];
    const place = (b: Block): void => {
      out.push(b);
      for (const d of blocks) if (b.id && d.after === b.id) place(d);
    };
    for (const b of blocks) if (!b.after || !ids.has(b.after)) place(b);
    for (const id of ids) seen.add(id);
    return out;
  });
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
      `if [ "$__rc" != ${n} ]; then echo "docs: expected exit ${n}, got exit $__rc: ${cmd.join(' ').replace(/["$`\\]/g, '.').slice(0, 160)}"; exit 1; fi`,
    );
  }
  return out.join('\n');
}

/**
 * `npx --no-install aer1 ARGS` and `npm run [--silent] SCRIPT [-- ARGS]` as what they resolve to in the
 * checkout (`node bin/aer1 ARGS`; the package.json script line run by sh with ARGS appended, as npm runs it):
 * each start of npm costs about 2 s of CPU, some 60 s over the docs. The test checks once, with npm itself,
 * that both resolve so in the checkout. Any other npm or npx command is refused.
 */
export const LAUNCHERS = `
npx() {
  if [ "$1" != --no-install ] || [ "$2" != aer1 ]; then echo "docs: npx $* is not npx --no-install aer1"; return 2; fi
  shift 2; node bin/aer1 "$@"
}
npm() {
  if [ "$1" != run ]; then echo "docs: npm $* is not npm run"; return 2; fi
  shift; if [ "$1" = --silent ]; then shift; fi
  local name=$1; shift; if [ "\${1:-}" = -- ]; then shift; fi
  local line; line=$(node -p 'require("./package.json").scripts[process.argv[1]] ?? ""' "$name")
  if [ -z "$line" ]; then echo "docs: npm run $name: no such script"; return 2; fi
  sh -c "$line"' "$@"' "npm run $name" "$@"
}
`;

/** The bash script of one file's session: its blocks in run order, each announced by a `@@block k` line on the merged output. */
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
  const r = spawnSync('git', ['status', '--porcelain', '--ignored', '--untracked-files=all', '--', '.', ':(exclude)node_modules'], { cwd: REPO, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`git status: exit ${r.status} ${r.error ? String(r.error) : ''} ${r.stderr}`);
  return new Set(r.stdout.split('\n').filter((l) => l && !/^.. dist\//.test(l)));
}

/** Runs a bash script text; exit status and merged output. */
function bash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): { status: number | null; out: string } {
  const file = join(env.TMPDIR, `session-${Date.now()}.sh`);
  writeFileSync(file, script);
  const r = spawnSync('bash', [file], { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  return { status: r.status, out: `${r.stdout}${r.stderr}${r.error ? `\n(${r.error.message})` : ''}` };
}

const read = (file: string): string => readFileSync(join(REPO, file), 'utf8');

describe('README and docs/: the runnable blocks', () => {
  it('finds the marked blocks of every file, in an order where each runs after what it uses', () => {
    const files = docFiles();
    expect(files.slice(0, 1 + DOC_ORDER.length)).toEqual([README, ...DOC_ORDER]);
    // the local CLI only: `npx aer1` outside the checkout would fetch a registry package of that name
    for (const f of files) expect({ file: f, bare: read(f).split('\n').filter((l) => /npx (?!--no-install aer1\b)\S*\s*aer1\b/.test(l)) }).toEqual({ file: f, bare: [] });
    const order = runOrder(files.map((f) => runnableBlocks(read(f), f)));
    const readme = order[0].map((b) => b.section);
    expect(readme[0]).toBe('1. A key and the demo');
    const walk = order[0].findIndex((b) => b.id === 'coverage-walkthrough');
    expect(walk).toBeGreaterThan(0);
    expect(order[0][walk + 1]).toMatchObject({ after: 'coverage-walkthrough', section: '5. A coverage report and its evidence pack, verified offline' });
    const count = (file: string): number => order[files.indexOf(file)].length;
    expect([count('docs/auditing.md'), count('docs/coverage.md'), count('docs/cli.md')].every((n) => n > 0)).toBe(true);
    expect(order.flat().length).toBeGreaterThanOrEqual(10);
  });

  it('orders blocks by after= within a file and across files, and names the file of a bad marker', () => {
    const a = runnableBlocks('# A\n\n<!-- runnable after=x -->\n```sh\necho 2\n```\n\n<!-- runnable id=x -->\n```sh\necho 1\n```\n', 'a.md');
    const b = runnableBlocks('# B\n\n<!-- runnable after=x -->\n```sh\necho 3\n```\n', 'b.md');
    expect(runOrder([a, b]).map((f) => f.map((k) => `${k.file}:${k.line}:${k.text}`))).toEqual([['a.md:10:echo 1', 'a.md:5:echo 2'], ['b.md:5:echo 3']]);
    expect(() => runOrder([b, a])).toThrow('b.md:5: runnable after=x: no block of this file or an earlier one has id=x');
    expect(() => runOrder([a, a])).toThrow('a.md:10: runnable id=x is used twice');
    expect(() => runnableBlocks('<!-- runnable -->\ntext\n', 'c.md')).toThrow('c.md:1: a runnable marker');
  });

  it('checks the exit status a command comment announces', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'readme-exit-'));
    try {
      const run = (text: string): { status: number | null; out: string } => bash(`set -e -o pipefail\nexec 2>&1\n${withExitAssertions(text)}\necho reached\n`, tmp, { PATH: process.env.PATH ?? '', TMPDIR: tmp }, 10_000);
      expect(run('false   # exit 1: as announced')).toEqual({ status: 0, out: 'reached\n' });
      expect(run('echo a \\\n  b; (exit 2)   # exit 2 here')).toEqual({ status: 0, out: 'a b\nreached\n' });
      const ok = run('true   # exit 1: announced, but it passed');
      expect(ok.status).toBe(1);
      expect(ok.out).toContain('docs: expected exit 1, got exit 0');
      const other = run('(exit 2)   # exit 1');
      expect(other.status).toBe(1);
      expect(other.out).toContain('docs: expected exit 1, got exit 2');
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

  it('run as pasted against the service, one session per file, and leave no file in the checkout', async () => {
    const files = docFiles();
    const sessions = runOrder(files.map((f) => runnableBlocks(read(f), f))).filter((blocks) => blocks.length > 0);
    const tmp = mkdtempSync(join(tmpdir(), 'readme-blocks-'));
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const databaseUrl = `sqlite:${join(tmp, 'ledger.sqlite')}`;
    const server = await ServerProcess.start({ PORT: String(port), PUBLIC_BASE_URL: base, DATABASE_URL: databaseUrl }, 60_000);
    try {
      const before = untracked();
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmp, TMPDIR: tmp, AER1_SERVER: base, DATABASE_URL: databaseUrl };
      let all = '';
      for (const blocks of sessions) {
        const r = bash(sessionScript(blocks, base), REPO, env, 420_000);
        all += r.out;
        if (!r.out.includes('\n@@done\n')) {
          const marks = [...r.out.matchAll(/\n@@block (\d+)\n/g)];
          const last = marks[marks.length - 1];
          const b = last ? blocks[Number(last[1])] : undefined;
          const where = b ? `the block at ${b.file}:${b.line} (section "${b.section}")` : `${blocks[0].file}, before its first block`;
          const output = last ? r.out.slice((last.index ?? 0) + last[0].length) : r.out;
          throw new Error(`docs example failed (exit ${r.status}) in ${where}:\n${output.slice(-6000)}\n--- server stderr:\n${server.stderr.text.slice(-2000)}`);
        }
        expect({ file: blocks[0].file, status: r.status }).toEqual({ file: blocks[0].file, status: 0 });
      }
      expect(all).toMatch(/\d+ passed, 0 failed/); // aer1 conformance
      expect(all).toContain('digest MATCHES'); // aer1 coverage --check-report
      expect(all).toContain('Result: VERIFIED'); // aer1 log verify-proof, aer1 verify-pack
      const added = [...untracked()].filter((l) => !before.has(l));
      expect(added).toEqual([]);
    } finally {
      await server.stop();
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 900_000);
});
