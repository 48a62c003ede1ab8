/**
 * `aer1 conformance [CORPUS]`: run a corpus in the format of the shared
 * vectors file against the core. A vector passes when the verdict equals the
 * expected verdict and every expected reason code is reported (extra codes
 * for further failing checks are allowed, vectors README).
 */
import { Command } from 'commander';
import { AnyResult, DocumentKind, isObject, verifyDocument, verifyDocumentText } from '../../core/aer1';
import { memberText } from '../../core/aer1/json-integer';
import { splitJsonArray } from '../../core/json';
import { Input, readJsonDocumentBytes } from '../input';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, OutputWriter, RunContext } from '../io';
import { defaultCorpusPath } from '../paths';
import { safe } from '../report';

const KINDS: ReadonlySet<string> = new Set(['receipt', 'chain', 'commitment', 'workflow']);

/** The outcome of one vector. */
export interface VectorOutcome {
  id: string;
  kind: string;
  pass: boolean;
  expected: { verdict: string; reasons: string[] } | null;
  got: { verdict: string; reasons: string[] } | null;
  /** Expected reason codes that were not reported. */
  missing: string[];
  /** Why the vector could not be run (malformed vector), when it could not. */
  error?: string;
}

/**
 * Run every vector of a parsed corpus. Throws {@link CliError} when `corpus`
 * is not a corpus at all. With `text`, the JSON text `corpus` was parsed
 * from, each input is verified with its text (core verifyDocumentText: the
 * rules only the text shows, as `aer1 verify FILE` and `--batch` apply them).
 */
export function runCorpus(corpus: unknown, text?: string): { name: string; outcomes: VectorOutcome[] } {
  if (!isObject(corpus) || !Array.isArray(corpus.vectors)) throw new CliError('not a conformance corpus: expected {"corpus", "version", "vectors": [...]}');
  const name = `${typeof corpus.corpus === 'string' ? corpus.corpus : '(unnamed corpus)'}${typeof corpus.version === 'string' ? ` version ${corpus.version}` : ''}`;
  const vectors = corpus.vectors;
  const texts = text === undefined ? null : splitJsonArray(memberText(text, ['vectors']) ?? '');
  const inputText = (i: number): string | null => (texts !== null && texts.length === vectors.length ? memberText(texts[i], ['input']) : null);
  const outcomes = vectors.map((v: unknown, i: number): VectorOutcome => {
    const id = isObject(v) && typeof v.id === 'string' ? v.id : `#${i + 1}`;
    const kind = isObject(v) && typeof v.kind === 'string' ? v.kind : '?';
    const fail = (error: string, expected: VectorOutcome['expected'] = null): VectorOutcome => ({ id, kind, pass: false, expected, got: null, missing: [], error });
    if (!isObject(v)) return fail('the vector is not an object');
    const e = v.expected;
    if (!isObject(e) || typeof e.verdict !== 'string' || !Array.isArray(e.reasons) || !e.reasons.every((r) => typeof r === 'string')) {
      return fail('expected must be {"verdict": string, "reasons": [string, ...]}');
    }
    const expected = { verdict: e.verdict, reasons: e.reasons as string[] };
    if (!KINDS.has(kind)) return fail(`unknown kind ${JSON.stringify(v.kind)}`, expected);
    let r: AnyResult;
    try {
      const t = inputText(i);
      r = t === null ? verifyDocument(v.input, kind as DocumentKind) : verifyDocumentText(v.input, t, [], kind as DocumentKind);
    } catch (err) {
      return fail(`the verifier threw: ${errorText(err)}`, expected);
    }
    const got: readonly string[] = r.reasons;
    const missing = expected.reasons.filter((code) => !got.includes(code));
    return { id, kind, pass: r.verdict === expected.verdict && missing.length === 0, expected, got: { verdict: r.verdict, reasons: r.reasons }, missing };
  });
  return { name, outcomes };
}

function list(reasons: string[]): string {
  return `[${reasons.join(', ')}]`;
}

/** Run `aer1 conformance`; returns the exit code. */
export async function conformance(corpusFile: string | undefined, opts: { verbose?: boolean }, io: CliIo): Promise<number> {
  const file = corpusFile ?? defaultCorpusPath();
  const input = Input.open(file, io);
  let read: { value: unknown; bytes: Buffer };
  try {
    read = await readJsonDocumentBytes(input);
  } finally {
    input.close();
  }
  const { name, outcomes } = runCorpus(read.value, read.bytes.toString('utf8'));
  const out = new OutputWriter(io.stdout);
  try {
    await out.write(`${safe(name)}: ${outcomes.length} vectors from ${safe(input.name)}\n`);
    let passed = 0;
    for (const o of outcomes) {
      if (o.pass) {
        passed++;
        if (opts.verbose) await out.write(`PASS ${safe(o.id)}  ${o.got?.verdict} ${list(o.got?.reasons ?? [])}\n`);
        continue;
      }
      const expected = o.expected ? `${o.expected.verdict} ${list(o.expected.reasons)}` : '(malformed)';
      const got = o.got ? `${o.got.verdict} ${list(o.got.reasons)}` : `(not run: ${o.error})`;
      const missing = o.missing.length ? `; missing ${list(o.missing)}` : '';
      await out.write(`FAIL ${safe(o.id)} (${safe(o.kind)}): expected ${expected}, got ${got}${missing}\n`);
    }
    await out.write(`${passed} passed, ${outcomes.length - passed} failed\n`);
    await out.end();
    return passed === outcomes.length ? EXIT_OK : EXIT_NOT_VALID;
  } finally {
    out.detach();
  }
}

/** Register `conformance` on `program`. */
export function registerConformance(program: Command, ctx: RunContext): void {
  program
    .command('conformance')
    .description('run a conformance corpus (the shared vectors format) against this verifier')
    .argument('[corpus]', 'corpus file; default: the package copy test/vectors/aer1-public/aer1-vectors.json')
    .option('--verbose', 'also list the vectors that pass')
    .addHelpText(
      'after',
      `
A vector passes when the verdict equals expected.verdict and every code in
expected.reasons is reported. Each failure is printed as
  FAIL <id> (<kind>): expected <verdict> [reasons], got <verdict> [reasons]
and the last line is "N passed, N failed".

Exit codes: 0 all passed; 1 any failed; 2 unreadable or malformed corpus.`,
    )
    .action(async (corpus: string | undefined, opts: { verbose?: boolean }) => {
      ctx.exitCode = await conformance(corpus, opts, ctx.io);
    });
}
