/**
 * Every relative link of README.md, UPGRADING.md and docs/*.md resolves: the file (or folder) it names
 * exists in the checkout, and a `#anchor` (into the same file or another markdown file) names a heading of
 * that file, slugged as GitHub slugs headings. Links and images inside code (fences, backtick spans) are
 * not links; absolute URLs (`http:`, `https:`, `mailto:`) are not checked. Pure: reads files, starts nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const REPO = join(__dirname, '../..');

/** The markdown files whose links are checked, relative to the checkout. */
export function checkedFiles(): string[] {
  const docs = readdirSync(join(REPO, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', 'UPGRADING.md', ...docs];
}

/** A markdown text without its fenced code blocks (each fenced line blanked, so line numbers stay). */
function withoutFences(markdown: string): string[] {
  let fence = false;
  return markdown.split('\n').map((l) => {
    if (/^\s*```/.test(l)) {
      fence = !fence;
      return '';
    }
    return fence ? '' : l;
  });
}

/** GitHub's anchor of a heading text: inline markup dropped, lower case, punctuation removed, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/[*_]{1,2}([^*_]+)[*_]{1,2}/g, '$1');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown text's headings, a repeated one suffixed -1, -2, … as GitHub does. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const count = new Map<string, number>();
  for (const l of withoutFences(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (!m) continue;
    const s = slug(m[1]);
    const n = count.get(s) ?? 0;
    count.set(s, n + 1);
    out.add(n === 0 ? s : `${s}-${n}`);
  }
  return out;
}

/** The relative link targets of a markdown text outside code, with their 1-based lines. */
export function links(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  withoutFences(markdown).forEach((l, i) => {
    const text = l.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1].replace(/^<|>$/g, '');
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      out.push({ line: i + 1, target });
    }
  });
  return out;
}

/** Every link of `file` that does not resolve, as `file:line: target (why)`. */
export function brokenLinks(file: string): string[] {
  const text = readFileSync(join(REPO, file), 'utf8');
  const broken: string[] = [];
  for (const { line, target } of links(text)) {
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const abs = path === '' ? join(REPO, file) : join(REPO, dirname(file), decodeURIComponent(path));
    const where = relative(REPO, abs);
    if (where.startsWith('..') || !existsSync(abs)) {
      broken.push(`${file}:${line}: ${target} (no file ${where})`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!abs.endsWith('.md')) {
      broken.push(`${file}:${line}: ${target} (an anchor into a file that is not markdown)`);
      continue;
    }
    if (!anchors(readFileSync(abs, 'utf8')).has(anchor)) broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${where})`);
  }
  return broken;
}

describe('docs: relative links and anchors', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('The offline verifier: `aer1`')).toBe('the-offline-verifier-aer1');
    expect(slug('Time anchors (RFC 3161, S10)')).toBe('time-anchors-rfc-3161-s10');
    expect(slug('5. A coverage report and its evidence pack, verified offline')).toBe('5-a-coverage-report-and-its-evidence-pack-verified-offline');
    expect(slug("Who stands behind an endpoint commitment's note")).toBe('who-stands-behind-an-endpoint-commitments-note');
    expect([...anchors('# A\n## B b\n```\n# not a heading\n```\n## B b\n')]).toEqual(['a', 'b-b', 'b-b-1']);
  });

  it('finds links outside code only', () => {
    expect(links('[a](x.md#y) `[b](z.md)` [c](https://e.example/) ![i](img/p.png)\n```\n[d](q.md)\n```\n[e](#f)')).toEqual([
      { line: 1, target: 'x.md#y' },
      { line: 1, target: 'img/p.png' },
      { line: 5, target: '#f' },
    ]);
  });

  it('every relative link and anchor of README.md, UPGRADING.md and docs/*.md resolves', () => {
    const files = checkedFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'UPGRADING.md', 'docs/api.md', 'docs/auditing.md', 'docs/cli.md', 'docs/coverage.md', 'docs/development.md', 'docs/formats.md', 'docs/getting-started.md', 'docs/operating.md']));
    expect(files.flatMap(brokenLinks)).toEqual([]);
    // the README links to every guide
    const readme = links(readFileSync(join(REPO, 'README.md'), 'utf8')).map((l) => l.target.split('#')[0]);
    expect(files.filter((f) => f !== 'README.md' && !readme.includes(f))).toEqual([]);
  });
});
