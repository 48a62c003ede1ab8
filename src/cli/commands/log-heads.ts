/**
 * `aer1 log check-heads` and the `--check-heads DIR` part of `aer1 log
 * monitor` (issue 30): a stream-heads statement (src/core/tlog/stream-heads.ts)
 * checked against the log's public leaves.
 *
 * - `aer1 log check-heads --url BASE --vkey VKEY [--key KEY] STATEMENT|PACK [--json]`:
 *   the statement's signature (the log key), the log's signed checkpoint of
 *   the statement's size (same root), then every leaf below that size, read
 *   in pages of `GET BASE/api/ledger/leaves` (constant memory): their RFC
 *   6962 root must be the checkpoint's, each claimed head must be the event
 *   at its position with its stream id and hash, and no later leaf up to
 *   the size may belong to the same stream. A PACK argument (JSON Lines) is
 *   read for its `log/stream-heads` members (`{"member":"log/stream-heads","note":...}`,
 *   docs/evidence-pack.md). Exit 0 CONSISTENT; 1 a claimed head is false
 *   (the stream, the claimed head and the later event that contradicts it
 *   are named), the statement is not signed by the log key, or the leaves
 *   are not the checkpoint's; 2 usage error, the log could not be reached,
 *   or some head could not be checked (leaves withheld from this caller:
 *   give an auditor key with --key).
 */
import { Command } from 'commander';
import { createReadStream, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { sha256Hex } from '../../core/aer1';
import { HeadsChecker, HeadsReport } from '../../core/ledger/stream-heads-check';
import { EMPTY_ROOT, leafHash, NoteVerifier, StreamHeads, TreeIntegrator, verifyCheckpoint, verifyStreamHeads } from '../../core/tlog';
import { CliError, CliIo, errorText, EXIT_NOT_VALID, EXIT_OK, EXIT_USAGE, RunContext, writeAll } from '../io';
import { baseUrl, DEFAULT_TIMEOUT_S, getOk, leavesPage, LogUnreachable } from '../log-client';
import { logKey, wholeNumber } from '../log-options';
import { saveAtomically } from '../monitor-state';
import { safe } from '../report';

/** Leaves asked for per page (the log's maximum). */
const PAGE = 1000;
/** The pack member names that hold a statement. */
const MEMBER = /^log\/stream-heads(\/[1-9][0-9]{0,5})?$/;

/** One statement to check: where it came from and its signed note. */
export interface StatementSource {
  source: string;
  note: string;
}

/** A statement's outcome. */
export interface StatementResult {
  source: string;
  /** `consistent`, `inconsistent`, `unchecked` (see HeadsReport), or `refused` (not a statement signed by the log key). */
  result: HeadsReport['result'] | 'refused';
  error?: string;
  report?: HeadsReport;
  checkpoint_root_matches?: boolean;
}

/** The statements a file holds: a signed note, or a pack's `log/stream-heads` members. Throws CliError (exit 2) when it holds none. */
export async function readStatements(file: string): Promise<StatementSource[]> {
  let first: Buffer;
  try {
    first = readFileSync(file).subarray(0, 1);
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${errorText(e)}`);
  }
  if (first[0] !== 0x7b) return [{ source: file, note: readFileSync(file, 'utf8') }];
  const out: StatementSource[] = [];
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.includes('"log/stream-heads')) continue;
    let m: unknown;
    try {
      m = JSON.parse(line);
    } catch {
      continue;
    }
    const o = m as { member?: unknown; note?: unknown };
    if (typeof o.member === 'string' && MEMBER.test(o.member)) {
      if (typeof o.note !== 'string') throw new CliError(`${file}: member ${safe(o.member)} holds no "note" string`);
      out.push({ source: `${file}#${o.member}`, note: o.note });
    }
  }
  if (out.length === 0) throw new CliError(`${file} is a pack without a log/stream-heads member (packs carry one from issue 30's pack step on; see docs/stream-heads.md)`);
  return out;
}

interface CheckOptions {
  timeout?: number;
  key?: string;
}

/**
 * Check statements against the log at `base`: each signature with `log`,
 * each size's signed checkpoint, then ONE pass over the leaves up to the
 * largest size, feeding every statement (its root is taken when the pass
 * reaches its size). Memory: one page of leaves and one entry per named stream.
 */
export async function checkStatements(base: string, log: NoteVerifier, sources: readonly StatementSource[], opts: CheckOptions): Promise<StatementResult[]> {
  const t = opts.timeout ?? DEFAULT_TIMEOUT_S;
  const results: StatementResult[] = [];
  const live: { r: StatementResult; checker: HeadsChecker }[] = [];
  const cpRoots = new Map<number, Buffer>();
  for (const s of sources) {
    let st: StreamHeads;
    try {
      st = verifyStreamHeads(s.note, [log], log.name).statement;
    } catch (e) {
      results.push({ source: s.source, result: 'refused', error: `${(e as { code?: string }).code ?? 'invalid'}: ${errorText(e)}` });
      continue;
    }
    if (!cpRoots.has(st.size)) {
      const note = (await getOk(`${base}/api/ledger/checkpoints/${st.size}`, t, 'text/plain', opts.key)).toString('utf8');
      let root: Buffer;
      try {
        root = verifyCheckpoint(note, [log], log.name).checkpoint.rootHash;
      } catch (e) {
        throw new LogUnreachable(`the log's checkpoint of size ${st.size} does not verify with --vkey: ${errorText(e)}`);
      }
      cpRoots.set(st.size, root);
    }
    const r: StatementResult = { source: s.source, result: 'unchecked', checkpoint_root_matches: (cpRoots.get(st.size) as Buffer).equals(st.rootHash) };
    results.push(r);
    live.push({ r, checker: new HeadsChecker(st) });
  }
  const max = Math.max(0, ...live.map((l) => l.checker.statement.size));
  const tree = TreeIntegrator.empty();
  const settle = (): void => {
    for (const l of live) if (l.r.report === undefined && l.checker.statement.size === tree.size) finish(l.r, l.checker.finish(tree.size === 0 ? Buffer.from(EMPTY_ROOT) : tree.root()));
  };
  settle();
  while (tree.size < max) {
    const page = await leavesPage(base, tree.size, Math.min(PAGE, max - tree.size), t, leafHash, opts.key);
    let k = 0;
    while (k < page.length) {
      // Up to the next statement's size at most: its root is taken there.
      const next = Math.min(...live.map((l) => l.checker.statement.size).filter((n) => n > tree.size));
      const part = page.slice(k, k + Math.min(page.length - k, next - tree.size));
      for (const l of live) for (const leaf of part) if (leaf.index < l.checker.statement.size) l.checker.push(leaf);
      tree.appendLeafHashes(part.map((leaf) => leaf.leafHash));
      k += part.length;
      settle();
    }
  }
  return results;
}

function finish(r: StatementResult, report: HeadsReport): void {
  r.report = report;
  r.result = r.checkpoint_root_matches === false ? 'inconsistent' : report.result;
}

const MARK = { consistent: '✓', contradicted: '✗', head_mismatch: '✗', chain_broken: '✗', unchecked: '–' } as const;

/** The readable report of one statement. */
export function statementText(r: StatementResult): string {
  if (r.result === 'refused') return `Statement: ${safe(r.source)}\nResult: REFUSED: not a stream-heads statement signed by the log key (${safe(r.error ?? '', 300)})\n`;
  const rep = r.report as HeadsReport;
  const out = [`Statement: ${safe(r.source)}: ${rep.streams.length} streams as of checkpoint size ${rep.size}, signed by the log key`];
  out.push(`  ${r.checkpoint_root_matches ? '✓' : '✗'} the log's signed checkpoint of size ${rep.size} has the statement's root`);
  out.push(`  ${rep.root_matches ? '✓' : '✗'} the ${rep.size} leaves read make that root${rep.leaves_unread ? ` (${rep.leaves_unread} of them withheld from this caller: their streams are unknown)` : ''}`);
  for (const s of rep.streams) out.push(`  ${MARK[s.verdict]} ${safe(s.stream_id)} head ${s.claimed.position}: ${s.verdict.toUpperCase()}: ${safe(s.detail, 400)}`);
  const legacy = rep.streams.filter((s) => s.legacy_events > 0);
  if (legacy.length > 0) {
    const from = rep.first_format3_position === null ? 'any position (no format 3 leaf at or below the size)' : `position ${rep.first_format3_position}`;
    out.push(`  note: ${legacy.length} stream(s) have events in format 1 or 2 (no stream_prev): their heads were checked here by reading every leaf, but completeness not provable before ${from} offline (a pack cannot chain those events)`);
  }
  const bad = rep.streams.find((s) => s.verdict !== 'consistent' && s.verdict !== 'unchecked');
  if (r.result === 'consistent') out.push(`Result: CONSISTENT: every head is the newest event of its stream as of size ${rep.size}`);
  else if (r.result === 'inconsistent') {
    out.push(
      bad?.later
        ? `Result: INCONSISTENT: stream ${safe(bad.stream_id)}: the claimed head ${bad.claimed.position} is contradicted by the later ${safe(bad.later.type)} event at position ${bad.later.position} (hash ${bad.later.event_hash}): the log key signed a false statement`
        : bad
          ? `Result: INCONSISTENT: stream ${safe(bad.stream_id)}: ${bad.verdict} (${bad.code})`
          : 'Result: INCONSISTENT: the leaves the log serves are not the tree of the statement\'s root',
    );
  } else out.push('Result: UNCHECKED: no head is contradicted, but some could not be checked (leaves withheld: give an auditor key with --key)');
  return out.join('\n') + '\n';
}

/** Exit code of results: 1 if any is inconsistent or refused, else 2 if any is unchecked, else 0. */
export function exitOf(results: readonly StatementResult[]): number {
  if (results.some((r) => r.result === 'inconsistent' || r.result === 'refused')) return EXIT_NOT_VALID;
  return results.some((r) => r.result === 'unchecked') ? EXIT_USAGE : EXIT_OK;
}

interface CheckHeadsOptions extends CheckOptions {
  url?: string;
  vkey?: string;
  json?: boolean;
}

/** `aer1 log check-heads`: returns the exit code. */
export async function checkHeadsCommand(file: string, opts: CheckHeadsOptions, io: CliIo): Promise<number> {
  const log = logKey(opts.vkey);
  const base = baseUrl(opts.url);
  const statements = await readStatements(file);
  const results = await checkStatements(base, log, statements, { timeout: opts.timeout, key: opts.key ?? (process.env.AER1_AUDITOR_KEY || undefined) });
  // From a pack, say what this does not check: whether the pack holds what its statements name (verify-pack does).
  const fromPack = statements.some((s) => s.source.includes('#log/stream-heads'));
  const scope = fromPack ? 'This checks the pack\'s signed statements against the log, not the pack\'s other members: `aer1 verify-pack` checks that the pack holds every stream they name.\n' : '';
  await writeAll(io.stdout, opts.json ? JSON.stringify({ url: base, results }, null, 2) + '\n' : results.map(statementText).join('') + scope);
  return exitOf(results);
}

/**
 * The `--check-heads DIR` round of `aer1 log monitor`: every statement file
 * in DIR (not starting with `.`) whose size the log's checkpoint (`served`)
 * already covers is checked, all in one pass over the leaves; files found
 * consistent are listed in `<state>.heads` (by SHA-256) and not read again,
 * the others are checked again every round. Statements for a larger size
 * wait for the log to grow.
 */
export async function monitorHeads(dir: string, base: string, log: NoteVerifier, servedSize: number, stateFile: string, opts: CheckOptions): Promise<{ exit: number; text: string; json: Record<string, unknown> }> {
  const doneFile = `${stateFile}.heads`;
  let done = new Set<string>();
  try {
    done = new Set(readFileSync(doneFile, 'utf8').split('\n').filter((l) => /^[0-9a-f]{64}$/.test(l)));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`cannot read ${doneFile}: ${errorText(e)}`);
  }
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => !n.startsWith('.') && statSync(join(dir, n)).isFile()).sort();
  } catch (e) {
    throw new CliError(`cannot read the --check-heads folder ${dir}: ${errorText(e)}`);
  }
  const todo: (StatementSource & { hash: string })[] = [];
  let waiting = 0;
  for (const n of names) {
    for (const s of await readStatements(join(dir, n))) {
      const hash = sha256Hex(s.note);
      if (done.has(hash)) continue;
      const size = Number(s.note.split('\n')[2]);
      if (Number.isSafeInteger(size) && size > servedSize) waiting++;
      else todo.push({ ...s, hash });
    }
  }
  const results = todo.length ? await checkStatements(base, log, todo, opts) : [];
  results.forEach((r, i) => r.result === 'consistent' && done.add(todo[i].hash));
  if (results.some((r) => r.result === 'consistent')) saveAtomically(doneFile, [...done].join('\n') + '\n');
  const bad = results.filter((r) => r.result !== 'consistent');
  const head = `HEADS: ${results.length - bad.length} statement(s) in ${safe(dir)} checked CONSISTENT now, ${done.size} so far; ${waiting} wait for a larger checkpoint; ${bad.length} not consistent`;
  return { exit: exitOf(results), text: [head, ...bad.map(statementText)].join('\n'), json: { checked: results.length, consistent_so_far: done.size, waiting, results: bad } };
}

/** Register `log check-heads` on the `log` command. */
export function registerCheckHeads(log: Command, ctx: RunContext): void {
  log
    .command('check-heads')
    .description("check a stream-heads statement (or a pack's) against the log's leaves: signature, checkpoint root, and that no later event of a named stream exists up to its size")
    .argument('<file>', 'a statement (GET /api/ledger/stream-heads) or an evidence pack carrying log/stream-heads members')
    .option('--url <base>', 'the ledger, e.g. https://ledger.example.com')
    .option('--vkey <vkey>', 'the log verifier key, <origin>+<hex key id>+<base64 key>')
    .option('--key <key>', 'an auditor API key, to read leaves withheld from the public (default: $AER1_AUDITOR_KEY)')
    .option('--timeout <seconds>', `HTTP timeout (default ${DEFAULT_TIMEOUT_S})`, wholeNumber(1, 'seconds'))
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExit codes: 0 CONSISTENT; 1 a head is contradicted (stream, claimed head and the later event named), the statement is not signed by the log key, or the leaves are not the checkpoint\'s; 2 usage error, the log could not be reached, or a head could not be checked (leaves withheld: use --key).')
    .action(async (file: string, opts: CheckHeadsOptions) => {
      ctx.exitCode = await checkHeadsCommand(file, opts, ctx.io);
    });
}
