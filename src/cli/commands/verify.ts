/**
 * `aer1 verify [--kind K] [--json] [--commitment FILE] FILE|-`
 * `aer1 verify --batch [--json] [--kind K] FILE|-`
 *
 * One document (receipt, timeline, commitment, workflow) read whole and
 * verified with the core's `verifyDocument`; a timeline in NDJSON with
 * `--kind chain` is streamed through `TimelineVerifier` in constant memory.
 */
import { Command, Option } from 'commander';
import {
  AnyResult,
  checkCommitment,
  CommitmentResult,
  DocumentKind,
  has,
  isObject,
  JsonObject,
  TimelineResult,
  TimelineVerifier,
  verifyDocument,
} from '../../aer1';
import { commitmentAsWritten } from '../../aer1/commitment-text';
import { canStartJson, changedWhileRead, fileStamp, Input, LineSplitter, parseJsonBytes, readJsonDocumentBytes, timelineLineReader } from '../input';
import { verifyTimelineFileInParallel } from '../parallel-chain';
import { CliError, CliIo, EXIT_NOT_VALID, EXIT_OK, RunContext, writeAll } from '../io';
import { NdjsonStats, renderReport } from '../report';
import { runBatch } from './batch';

export type KindOption = DocumentKind | 'auto';
export const KIND_CHOICES: KindOption[] = ['auto', 'receipt', 'chain', 'commitment', 'workflow'];

export interface VerifyOptions {
  kind: KindOption;
  json?: boolean;
  batch?: boolean;
  commitment?: string;
  /** Worker threads for an NDJSON timeline file (default: one per CPU for files of 16 MiB or more). */
  threads?: number;
}

/**
 * Verify an NDJSON timeline line by line (S7.2) with `collectEntries: false`:
 * memory stays constant however many entries there are. A line that is not
 * JSON (or not UTF-8) is pushed as a non-object and so counts as an invalid
 * entry; blank lines are skipped.
 */
export async function streamTimeline(chunks: AsyncIterable<Buffer>): Promise<{ result: TimelineResult; ndjson: NdjsonStats }> {
  const v = new TimelineVerifier({ collectEntries: false });
  const stats: NdjsonStats = { format: 'ndjson', lines: 0, blank_lines: 0, not_json_lines: 0, not_json_at: [] };
  // Lines are handled synchronously per chunk: no promise per line.
  const onLine = timelineLineReader(v, stats);
  const splitter = new LineSplitter();
  for await (const chunk of chunks) splitter.push(chunk, onLine);
  splitter.end(onLine);
  return { result: v.finish(), ndjson: stats };
}

async function* once(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

/** Split a commitment file into the commitment and an optional envelope carrying witness metadata. */
function commitmentParts(doc: unknown): { commitment: unknown; envelope?: JsonObject } {
  if (isObject(doc) && has(doc, 'commitment') && !has(doc, 'job_id')) return { commitment: doc.commitment, envelope: doc };
  return { commitment: doc };
}

/** `aer1 verify` on one document. Returns the exit code. */
export async function verifySingle(file: string, opts: VerifyOptions, io: CliIo): Promise<number> {
  const kind = opts.kind;
  if (opts.commitment !== undefined) {
    if (kind !== 'auto' && kind !== 'chain') throw new CliError(`--commitment checks a timeline: use it with --kind chain, not --kind ${kind}`);
    if (opts.commitment === '-' && file === '-') throw new CliError('stdin can be read only once: give the timeline or the commitment as a file');
  }
  let commitment: { commitment: unknown; envelope?: JsonObject; text?: string } | null = null;
  if (opts.commitment !== undefined) {
    const c = Input.open(opts.commitment, io);
    try {
      const read = await readJsonDocumentBytes(c);
      commitment = { ...commitmentParts(read.value), text: read.bytes.toString('utf8') };
    } finally {
      c.close();
    }
  }

  // A file written to while it is read gives no result (on one thread or several alike).
  const stamp = file === '-' ? null : fileStamp(file);
  const input = Input.open(file, io);
  let result: AnyResult;
  let doc: unknown;
  let ndjson: NdjsonStats | undefined;
  try {
    const first = await input.peek();
    if (first === null) throw new CliError(`${input.name} is empty (no bytes, or only white space)`);
    if (kind === 'chain' && (first === 0x7b /* { */ || !canStartJson(first))) {
      // NDJSON timeline (or bytes that cannot be one JSON value, each line then judged):
      // never read whole; a large file is verified on several threads.
      const parallel = file === '-' ? null : await verifyTimelineFileInParallel(file, opts.threads);
      ({ result, ndjson } = parallel ?? (await streamTimeline(input.chunks())));
    } else if (!canStartJson(first)) {
      throw new CliError(`${input.name} is not JSON: it begins with byte 0x${first.toString(16).padStart(2, '0')}`);
    } else {
      const bytes = await input.readAll();
      const parsed = parseJsonBytes(bytes);
      if (parsed.ok) {
        doc = parsed.value;
        result = verifyDocument(doc, kind);
        if (result.kind === 'commitment' && isObject(doc) && has(doc, 'timeline')) result = commitmentAsWritten(result, bytes.toString('utf8'), ['commitment']);
      } else if (parsed.why === 'not_json' && kind === 'chain') {
        // Not one JSON value: read it as NDJSON, one entry per line.
        ({ result, ndjson } = await streamTimeline(once(bytes)));
      } else if (parsed.why === 'not_json') {
        // V8 says "... after JSON at position N" when a second value follows the first: likely NDJSON.
        const hint = first === 0x7b && kind === 'auto' && /after JSON/.test(parsed.detail) ? ' (for an NDJSON timeline, one entry per line, use --kind chain)' : '';
        throw new CliError(`${input.name} is not JSON: ${parsed.detail}${hint}`);
      } else {
        throw new CliError(`${input.name} is ${parsed.detail}`);
      }
    }
  } finally {
    input.close();
  }
  if (stamp !== null && fileStamp(file) !== stamp) throw new CliError(changedWhileRead(input.name));

  if (commitment) {
    if (result.kind !== 'chain') throw new CliError(`--commitment checks a timeline, but ${input.name} is a ${result.kind}`);
    const c: CommitmentResult = commitmentAsWritten(checkCommitment(result, commitment.commitment, commitment.envelope), commitment.text ?? '', commitment.envelope ? ['commitment'] : []);
    result = c;
  }

  if (opts.json) {
    const out = ndjson ? { ...result, input: ndjson } : result;
    await writeAll(io.stdout, JSON.stringify(out, null, 2) + '\n');
  } else {
    await writeAll(io.stdout, renderReport(result, { source: input.name, doc, ndjson }));
  }
  return result.verdict === 'valid' ? EXIT_OK : EXIT_NOT_VALID;
}

function parseThreads(v: string): number {
  const n = Number(v);
  if (!/^[0-9]+$/.test(v) || !Number.isSafeInteger(n) || n < 1 || n > 64) throw new CliError(`--threads takes a whole number from 1 to 64, not ${JSON.stringify(v)}`);
  return n;
}

/** Register `verify` on `program`. */
export function registerVerify(program: Command, ctx: RunContext): void {
  program
    .command('verify')
    .description('verify one AER-1 document (receipt, timeline, endpoint commitment, workflow receipt), or a batch of them')
    .argument('<file>', 'the document to verify, or - for stdin')
    .addOption(new Option('--kind <kind>', 'what the document is; auto infers it from its shape').choices(KIND_CHOICES).default('auto'))
    .option('--json', 'print the result object as JSON (with --batch: one NDJSON line per input line)')
    .option('--commitment <file>', 'with a timeline (--kind chain or auto): also check this endpoint commitment ({job_id, final_entry_digest, entry_count, published_at}, or {commitment, witness...})')
    .option('--batch', 'FILE is NDJSON, one {"id","kind","input"} per line; see below')
    .option('--threads <n>', 'worker threads for an NDJSON timeline file (default: one per CPU for files of 16 MiB or more, else 1)', parseThreads)
    .addHelpText(
      'after',
      `
Input must be strict UTF-8 JSON without a byte order mark.

A timeline may be given as a JSON array or, with --kind chain, as NDJSON
(one entry per line): when the first non-blank character is "{" (or the
file is not one JSON value) it is streamed entry by entry in constant
memory. A line that is not JSON counts as an invalid entry. A file of
16 MiB or more is cut at line starts and verified on one worker thread
per CPU (--threads N to choose); the result is the same as on one thread.

--batch reads NDJSON lines {"id": ..., "kind": "receipt|chain|commitment|workflow|auto", "input": <document>}
(kind absent means --kind, default auto) and streams the results in order.
  with --json:    one line {"line","id","kind","verdict","reasons"} per
                  non-blank input line (line: its number); a line that is
                  not JSON gives reasons ["not_json"], a member name twice
                  in one object ["duplicate_member"], a JSON
                  value that is not an object ["not_object"], a bad kind
                  ["invalid_field:kind"], no input ["missing_field:input"].
  without --json: one line per document that is not valid, then a summary.
  Blank lines are skipped.

Exit codes: 0 valid (every line valid with --batch); 1 invalid, historical
or incomplete (any line, with --batch); 2 usage error, unreadable input,
input that is not UTF-8 or not JSON.`,
    )
    .action(async (file: string, opts: VerifyOptions) => {
      if (opts.batch) {
        if (opts.commitment !== undefined) throw new CliError('--commitment cannot be used with --batch');
        if (opts.threads !== undefined) throw new CliError('--threads applies to an NDJSON timeline file, not to --batch');
        ctx.exitCode = await runBatch(file, { json: opts.json === true, kind: opts.kind }, ctx.io);
      } else {
        ctx.exitCode = await verifySingle(file, opts, ctx.io);
      }
    });
}
