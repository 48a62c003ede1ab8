/**
 * `aer1 verify [--kind K] [--json] [--commitment FILE]... FILE|-`
 * `aer1 verify --batch [--json] [--kind K] FILE|-`
 *
 * One document (receipt, timeline, commitment, workflow) read whole and
 * verified with the core's `verifyDocument`; a timeline in NDJSON with
 * `--kind chain` is streamed through `TimelineVerifier` in constant memory.
 */
import { Command, Option } from 'commander';
import {
  AnyResult,
  assessCommitments,
  commitmentLabel,
  checkCommitment,
  CommitmentsAssessment,
  decidingCommitment,
  whoStandsBehind,
  DocumentKind,
  earlierCounts,
  entryDigest,
  has,
  isObject,
  JOB_ASSESSMENT_HEADLINE,
  jobAssessment,
  JsonObject,
  TimelineResult,
  TimelineVerifier,
  verifyDocumentText,
} from '../../core/aer1';
import { commitmentAsWritten, commitmentTextProblems } from '../../core/aer1/commitment-text';
import { Attestation, attestationLabel, NO_TRUST } from '../../core/aer1/attestation';
import { readCommitmentFile, trustFromOptions } from '../commitment-file';
import { canStartJson, changedWhileRead, fileStamp, Input, LineSplitter, parseJsonBytes, timelineLineReader } from '../input';
import { verifyTimelineFileInParallel } from '../parallel-chain';
import { CliError, CliIo, EXIT_NOT_VALID, EXIT_OK, RunContext, writeAll } from '../io';
import { NdjsonStats, renderReport, safe } from '../report';
import { otherDocumentHint, otherTextHint, refuseErrorAnswer } from '../recognise';
import { runBatch } from './batch';

/**
 * When `doc` is one of the ledger's JSON answers that wrap a record (not an
 * AER-1 document), what it is and which export to verify instead; else null.
 * Only `--kind auto` asks: an explicit kind is verified as given.
 */
export function serverWrapperHint(doc: unknown): string | null {
  if (!isObject(doc)) return null;
  if (typeof doc.job_id === 'string' && Array.isArray(doc.entries) && has(doc, 'verify_url')) {
    return "the ledger's timeline JSON (GET /api/jobs/{id}/timeline), not a timeline: verify its export, GET /api/jobs/{id}/export (NDJSON), with --kind chain";
  }
  if (has(doc, 'document') && has(doc, 'raw') && has(doc, 'verdict_at_record')) {
    return "the ledger's stored record of a receipt (GET /api/receipts/{id}), not a receipt: verify GET /api/receipts/{id}/raw";
  }
  if (typeof doc.job_id === 'string' && has(doc, 'assessment') && has(doc, 'verdict') && !has(doc, 'seq')) {
    return "the ledger's verify answer for a job, not a timeline: verify the job's export, GET /api/jobs/{id}/export (NDJSON), with --kind chain";
  }
  if (typeof doc.digest === 'string' && isObject(doc.report) && has(doc, 'report_id')) {
    return "a coverage report (GET /api/coverage-reports/{id}): check its digest with aer1 coverage --check-report";
  }
  return null;
}

export type KindOption = DocumentKind | 'auto';
export const KIND_CHOICES: KindOption[] = ['auto', 'receipt', 'chain', 'commitment', 'workflow'];

export interface VerifyOptions {
  kind: KindOption;
  json?: boolean;
  batch?: boolean;
  /** One file or several (`--commitment` repeated): all are judged together (src/core/aer1/commitments.ts). */
  commitment?: string | string[];
  /** `--log-vkey`: the ledger's log key; a commitment note it signed is `ledger_issued`. */
  logVkey?: string;
  /** `--trusted-key` (repeatable): keys whose signed commitment note is `attested_by` them. */
  trustedKey?: string[];
  /** Worker threads for an NDJSON timeline file (default: one per CPU for files of 16 MiB or more). */
  threads?: number;
}

/**
 * Verify an NDJSON timeline line by line (S7.2) with `collectEntries: false`:
 * memory stays constant however many entries there are. A line that is not
 * JSON (or not UTF-8) is pushed as a non-object and so counts as an invalid
 * entry; blank lines are skipped.
 */
export async function streamTimeline(chunks: AsyncIterable<Buffer>, wanted?: ReadonlySet<number>): Promise<{ result: TimelineResult; ndjson: NdjsonStats; digests: Map<number, string | null> }> {
  const v = new TimelineVerifier({ collectEntries: false });
  const stats: NdjsonStats = { format: 'ndjson', lines: 0, blank_lines: 0, not_json_lines: 0, not_json_at: [] };
  const digests = new Map<number, string | null>();
  let index = 0;
  // The digests of the entries at the `wanted` 1-based places are kept for earlier-checkpoint commitments.
  const sink = wanted && wanted.size > 0 ? { push: (e: unknown) => (v.push(e), ++index, wanted.has(index) && digests.set(index, entryDigest(e))) } : v;
  // Lines are handled synchronously per chunk: no promise per line.
  const onLine = timelineLineReader(sink, stats);
  const splitter = new LineSplitter();
  for await (const chunk of chunks) splitter.push(chunk, onLine);
  splitter.end(onLine);
  return { result: v.finish(), ndjson: stats, digests };
}

/** The S7.1 digests of the entries at the `wanted` 1-based places of an NDJSON timeline (one more pass over the file). */
async function digestsOfLines(chunks: AsyncIterable<Buffer>, wanted: ReadonlySet<number>): Promise<Map<number, string | null>> {
  const digests = new Map<number, string | null>();
  let index = 0;
  const stats: NdjsonStats = { format: 'ndjson', lines: 0, blank_lines: 0, not_json_lines: 0, not_json_at: [] };
  const onLine = timelineLineReader({ push: (e: unknown) => void (++index, wanted.has(index) && digests.set(index, entryDigest(e))) }, stats);
  const splitter = new LineSplitter();
  for await (const chunk of chunks) splitter.push(chunk, onLine);
  splitter.end(onLine);
  return digests;
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
  const commitmentFiles = opts.commitment === undefined ? [] : Array.isArray(opts.commitment) ? opts.commitment : [opts.commitment];
  if (commitmentFiles.length > 0) {
    if (kind !== 'auto' && kind !== 'chain') throw new CliError(`--commitment checks a timeline: use it with --kind chain, not --kind ${kind}`);
    if ([file, ...commitmentFiles].filter((f) => f === '-').length > 1) throw new CliError('stdin can be read only once: give the timeline or the commitment as a file');
  }
  /** Each commitment file: its value, envelope, and its text when `entry_count` is not written as a JSON integer (reading 9). */
  const commitments: { commitment: unknown; envelope?: JsonObject; miswritten?: { text: string; at: string[] }; attestation: Attestation }[] = [];
  const trust = trustFromOptions(opts.logVkey, opts.trustedKey);
  if (commitmentFiles.length === 0 && trust !== NO_TRUST) throw new CliError('--log-vkey and --trusted-key check --commitment files: give one');
  for (const f of commitmentFiles) {
    // A JSON commitment (self-asserted) or a signed note (ledger-issued or attested when a given key signed it).
    const read = await readCommitmentFile(f, io, trust);
    const parts = commitmentParts(read.value);
    const text = read.bytes.toString('utf8');
    const at = parts.envelope ? ['commitment'] : [];
    // Reading 9: entry_count must be written as a JSON integer (`8.0`, `8e0` make the commitment malformed).
    commitments.push(commitmentTextProblems(text, at).length > 0 ? { ...parts, miswritten: { text, at }, attestation: read.attestation } : { ...parts, attestation: read.attestation });
  }
  // Entry places earlier checkpoints name (all counts given: the visible count is not known yet).
  const wanted = new Set(commitments.flatMap((c) => (isObject(c.commitment) && Number.isSafeInteger(c.commitment.entry_count) && (c.commitment.entry_count as number) > 0 ? [c.commitment.entry_count as number] : [])));
  let digests: Map<number, string | null> | undefined;

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
      if (parallel) {
        ({ result, ndjson } = parallel);
        if (wanted.size > 0) {
          const again = Input.open(file, io);
          try {
            digests = await digestsOfLines(again.chunks(), wanted);
          } finally {
            again.close();
          }
        }
      } else ({ result, ndjson, digests } = await streamTimeline(input.chunks(), wanted));
    } else if (!canStartJson(first)) {
      // A proof file or a checkpoint is small: what peek read shows it.
      const other = kind === 'auto' ? otherTextHint(input.peekedBytes()) : null;
      if (other) throw new CliError(`${input.name} is ${other}`);
      throw new CliError(`${input.name} is not JSON: it begins with byte 0x${first.toString(16).padStart(2, '0')}`);
    } else {
      const bytes = await input.readAll();
      const parsed = parseJsonBytes(bytes);
      if (parsed.ok) {
        doc = parsed.value;
        refuseErrorAnswer(doc, input.name, 'an AER-1 document');
        const wrapper = kind === 'auto' ? (serverWrapperHint(doc) ?? otherDocumentHint(doc)) : null;
        if (wrapper) throw new CliError(`${input.name} is ${wrapper}`);
        result = verifyDocumentText(doc, parsed.text, [], kind);
      } else if (parsed.why === 'not_json' && kind === 'chain') {
        // Not one JSON value: read it as NDJSON, one entry per line.
        ({ result, ndjson, digests } = await streamTimeline(once(bytes), wanted));
      } else if (parsed.why === 'not_json' && kind === 'auto' && otherTextHint(bytes) !== null) {
        throw new CliError(`${input.name} is ${otherTextHint(bytes)}`);
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

  let assessment: CommitmentsAssessment | null = null;
  const chainVerdict = result.kind === 'chain' ? result.verdict : result.kind === 'commitment' ? result.timeline.verdict : null;
  if (commitments.length > 0) {
    if (result.kind !== 'chain') throw new CliError(`--commitment checks a timeline, but ${input.name} is a ${result.kind}`);
    const chain = result;
    const digestAt = new Map<number, string | null>(earlierCounts(chain, commitments.map((c) => ({ id: null, value: c.commitment }))).map((k) => [k, chain.entries?.[k - 1]?.entry_digest ?? digests?.get(k) ?? null]));
    // Every commitment judged together: the deciding one is reported in full (its verdict is valid only when truncation is excluded).
    // A miswritten entry_count is judged as no integer at all (the commitment is malformed).
    assessment = assessCommitments(chain, commitments.map((c) => ({ id: null, value: c.miswritten && isObject(c.commitment) ? { ...c.commitment, entry_count: null } : c.commitment, envelope: c.envelope, attestation: c.attestation })), { digest_at: digestAt });
    const deciding = decidingCommitment(assessment)!;
    const source = commitments[deciding.index];
    result = source.miswritten ? commitmentAsWritten(checkCommitment(chain, source.commitment, source.envelope), source.miswritten.text, source.miswritten.at) : deciding.check;
  }
  const deciding = assessment ? decidingCommitment(assessment) : null;
  // Who stands behind the deciding commitment, beside its binding result (issue 15).
  const who = assessment && deciding ? { attestation: deciding.attestation, binding_attestation: assessment.binding_attestation } : {};
  const extra = { ...who, ...(assessment && commitmentFiles.length > 1 ? { commitments: assessmentJson(assessment, commitmentFiles) } : {}) };
  // A timeline leads with the job's one assessment (as the ledger's /api/jobs/{id}/verify): the chain verdict and its commitments together.
  const overall = chainVerdict === null ? null : jobAssessment(chainVerdict, assessment ?? singleCommitmentStatus(result));

  if (opts.json) {
    const lead = overall === null ? {} : { assessment: overall };
    const out = ndjson ? { ...lead, ...result, ...extra, input: ndjson } : { ...lead, ...result, ...extra };
    await writeAll(io.stdout, JSON.stringify(out, null, 2) + '\n');
  } else {
    const lead = overall === null ? '' : `Assessment: ${JOB_ASSESSMENT_HEADLINE[overall]}\n`;
    const whoLine = assessment && deciding ? `Who stands behind the commitment: ${safe(whoStandsBehind(deciding.attestation, deciding.check.witness), 400)}${assessment.binding_attestation === 'self_asserted' ? '\n  (self-asserted: the producer\'s own word; give the ledger-issued note with --log-vkey, or a witness-signed note with --trusted-key)' : ''}\n` : '';
    await writeAll(io.stdout, lead + whoLine + renderReport(result, { source: input.name, doc, ndjson }) + (assessment && commitmentFiles.length > 1 ? assessmentText(assessment, commitmentFiles) : ''));
  }
  return result.verdict === 'valid' ? EXIT_OK : EXIT_NOT_VALID;
}

/**
 * The commitment judgement of a result without `--commitment` files: none for
 * a bare chain; for a `{timeline, commitment}` document, its one commitment
 * (malformed = binds nothing).
 */
function singleCommitmentStatus(result: AnyResult): Pick<CommitmentsAssessment, 'status' | 'truncation_excluded'> {
  if (result.kind !== 'commitment') return { status: 'absent', truncation_excluded: false };
  if (result.reasons.includes('invalid_commitment')) return { status: 'non_binding', truncation_excluded: false };
  return assessCommitments(result.timeline, [{ id: null, value: result.commitment }]);
}

/** What `--json` adds with several `--commitment` files: every commitment's outcome and the findings. */
function assessmentJson(a: CommitmentsAssessment, files: string[]) {
  return {
    status: a.status,
    truncation_excluded: a.truncation_excluded,
    findings: a.findings.map((f) => ({ code: f.code, file: files[f.index], message: f.message })),
    binding_attestation: a.binding_attestation,
    each: a.commitments.map((c) => ({ file: files[c.index], outcome: c.outcome, binding: c.binding, attestation: c.attestation, contradicts: c.contradicts, missing_entries: c.missing_entries, reasons: c.check.reasons, detail: c.detail })),
  };
}

function assessmentText(a: CommitmentsAssessment, files: string[]): string {
  const out = ['', `Endpoint commitments judged together (${a.commitments.length}): ${a.status}; truncation ${a.truncation_excluded ? 'excluded' : 'NOT excluded'}`];
  for (const c of a.commitments) out.push(`  ${commitmentLabel(c)} ${safe(files[c.index])}: ${c.outcome}, ${attestationLabel(c.attestation)}${c.contradicts ? ' (CONTRADICTS the timeline: no other commitment hides this)' : ''}`, `      ${safe(c.detail, 300)}`);
  return out.join('\n') + '\n';
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
    .option('--commitment <file>', 'with a timeline (--kind chain or auto): also check this endpoint commitment ({job_id, final_entry_digest, entry_count, published_at}, or {commitment, witness...}); repeat it for every commitment published: valid only when one binds and none shows truncation or a substituted entry', collect)
    .option('--log-vkey <vkey>', "the ledger's log verifier key: a --commitment file that is a note signed by it is ledger-issued")
    .option('--trusted-key <vkey>', 'a witness key you trust: a --commitment file that is a note signed by it is attested by it (repeatable)', collect)
    .option('--batch', 'FILE is NDJSON, one {"id","kind","input"} per line; see below')
    .option('--threads <n>', 'worker threads for an NDJSON timeline file (default: one per CPU for files of 16 MiB or more, else 1)', parseThreads)
    .addHelpText(
      'after',
      `
Input must be strict UTF-8 JSON without a byte order mark.

A --commitment file is the commitment as JSON (self-asserted: any witness
it names is its poster's claim), or a C2SP signed note whose text is the
commitment's JSON text and a newline (the "note" of GET
/api/jobs/{id}/endpoint): ledger-issued when --log-vkey signed it,
attested when a --trusted-key did; a given key's bad signature is exit 2.

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
        if (opts.commitment !== undefined && opts.commitment.length > 0) throw new CliError('--commitment cannot be used with --batch');
        if (opts.logVkey !== undefined || (opts.trustedKey ?? []).length > 0) throw new CliError('--log-vkey and --trusted-key check --commitment files, not --batch');
        if (opts.threads !== undefined) throw new CliError('--threads applies to an NDJSON timeline file, not to --batch');
        ctx.exitCode = await runBatch(file, { json: opts.json === true, kind: opts.kind }, ctx.io);
      } else {
        ctx.exitCode = await verifySingle(file, opts, ctx.io);
      }
    });
}
