/**
 * `aer1 coverage --plan FILE (--timeline FILE | --workflow FILE)
 *   [--commitment FILE]... [--receipts FILE] [--outcomes FILE] [--json]`
 * `aer1 coverage --check-report FILE [--json]`
 * Either form takes `--pdf FILE`: the report also written as a PDF
 * (src/coverage/coverage.pdf.ts, the same as `GET /coverage/{id}.pdf`).
 *
 * The ledger's coverage reconciliation, offline: the same pure
 * `reconcile()` (src/core/coverage/reconcile.ts) over files. Exit codes: 0 full
 * coverage (every expected action covered, the timeline valid with a binding
 * endpoint commitment, no flagged unplanned action); 1 any finding; 2 usage
 * error, unreadable input, or an invalid plan.
 */
import { Command } from 'commander';
import { has, isObject, JsonObject, uuidKey, verifyReceipt } from '../../core/aer1';
import { canonicalDigest } from '../../core/coverage/canonical';
import { NormalizedPlan, PlanSubject, validatePlan } from '../../core/coverage/plan';
import { CoverageReportContent, reconcile, RecordInput, reportDigest } from '../../core/coverage/reconcile';
import { commitmentValueAsWritten } from '../../core/aer1/commitment-text';
import { commitmentOf } from '../../core/coverage/assemble';
import { OutcomeRecord, outcomeNamesSubject } from '../../core/coverage/outcomes';
import { verifyOutcome } from '../../core/outcomes/outcome';
import { coverageHeadline, OUTCOME_WORDS, outcomeOverride, outcomeReason } from '../../core/coverage/headline';
import { Input, parseJsonBytes, parseLine, splitLines } from '../input';
import { otherTextHint, refuseErrorAnswer } from '../recognise';
import { Attestation, attestationLabel } from '../../core/aer1/attestation';
import { readCommitmentFile, trustFromOptions } from '../commitment-file';
import { CliError, CliIo, EXIT_NOT_VALID, EXIT_OK, RunContext, writeAll } from '../io';
import { safe } from '../report';
import { writeFileSync } from 'node:fs';
import type { CoveragePdfInput } from '../../coverage/coverage.pdf';

export interface CoverageOptions {
  plan?: string;
  /** A coverage report as `GET /api/coverage-reports/{id}` answers it: its digest is recomputed offline. */
  checkReport?: string;
  timeline?: string;
  workflow?: string;
  /** One file or several (`--commitment` repeated): every commitment is judged, none hides another's finding. */
  commitment?: string | string[];
  /** `--log-vkey`: a commitment note signed by it is ledger-issued. */
  logVkey?: string;
  /** `--trusted-key` (repeatable): a commitment note signed by one is attested. */
  trustedKey?: string[];
  receipts?: string;
  /** Outcome reports (issue 18): NDJSON or a JSON array, in ledger order (as `GET /api/jobs/{job_id}/outcomes` exports them). */
  outcomes?: string;
  json?: boolean;
  /** Also write the report as a PDF to this file (overwritten). */
  pdf?: string;
}

/** What `--json` prints. */
export interface CoverageCliOutput {
  digest: string;
  report: CoverageReportContent;
  receipts: { used: number; rejected: { index: number; id: unknown; reasons: string[] }[] };
  /** Present with --outcomes: reports used, and those that do not verify (not used). */
  outcomes?: { used: number; rejected: { index: number; outcome_id: unknown; reasons: string[] }[] };
}

async function* once(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}

/** Read a file as one JSON value, or as NDJSON (one value a line) when it is not one value. Bad lines become `undefined`. */
async function readJsonOrNdjson(file: string, io: CliIo): Promise<{ value: unknown; ndjson: boolean }> {
  const input = Input.open(file, io);
  try {
    if ((await input.peek()) === null) throw new CliError(`${input.name} is empty (no bytes, or only white space)`);
    const bytes = await input.readAll();
    const parsed = parseJsonBytes(bytes);
    if (parsed.ok) {
      refuseErrorAnswer(parsed.value, input.name, 'an input of aer1 coverage');
      return { value: parsed.value, ndjson: false };
    }
    if (parsed.why !== 'not_json') throw new CliError(`${input.name} is ${parsed.detail}`);
    const values: unknown[] = [];
    for await (const line of splitLines(once(bytes))) {
      const p = parseLine(line);
      if (p.type === 'json') values.push(p.value);
      else if (p.type === 'bad') values.push(undefined);
    }
    return { value: values, ndjson: true };
  } finally {
    input.close();
  }
}

/**
 * Read `file` as one JSON value (a CliError, exit 2, when it is not one). A
 * server's saved error answer, or another of the project's files that is not
 * one JSON value (an evidence pack, a log proof file, a signed note:
 * src/cli/recognise.ts), is named as what it is, with the command that reads it.
 */
async function readJson(file: string, io: CliIo, what = 'an input of aer1 coverage'): Promise<unknown> {
  const input = Input.open(file, io);
  try {
    if ((await input.peek()) === null) throw new CliError(`${input.name} is empty (no bytes, or only white space)`);
    const bytes = await input.readAll();
    const r = parseJsonBytes(bytes);
    if (!r.ok) {
      const hint = r.why === 'not_json' ? otherTextHint(bytes) : null;
      if (hint) throw new CliError(`${input.name} is ${hint.replace(', not an AER-1 document:', `, not ${what}:`)}`);
      throw new CliError(r.why === 'not_json' ? `${input.name} is not JSON: ${r.detail}` : `${input.name} is ${r.detail}`);
    }
    // An error answer saved by `curl -s ... > file` (a 429 when the read budget ran out, a 404 for a wrong id).
    refuseErrorAnswer(r.value, input.name, what);
    return r.value;
  } finally {
    input.close();
  }
}

interface LoadedPlan {
  plan: NormalizedPlan;
  plan_id: string | null;
  version: number | null;
  registered_at: string | null;
}

/**
 * The plan file: a plan as registered (`{job_id|workflow_id, title,
 * expected_actions, unplanned}`), one version as the API shows it
 * (`{plan_id, version, plan, digest, registered_at}`), or the whole plan
 * (`{plan_id, versions: [...]}`, the latest version is used).
 */
function loadPlan(doc: unknown, name: string): LoadedPlan {
  let meta: JsonObject = {};
  let body: unknown = doc;
  if (isObject(doc) && Array.isArray(doc.versions) && doc.versions.length > 0) doc = doc.versions[doc.versions.length - 1];
  if (isObject(doc) && has(doc, 'plan') && isObject(doc.plan) && !has(doc, 'expected_actions')) {
    meta = doc;
    body = doc.plan;
  }
  const v = validatePlan(body);
  if (!v.ok) throw new CliError(`${name} is not a valid plan: ${safe(v.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; '), 4000)}`);
  const digest = canonicalDigest(v.plan);
  if (typeof meta.digest === 'string' && meta.digest !== digest) throw new CliError(`${name}: the plan digest ${meta.digest} does not match the recomputed ${digest}`);
  return {
    plan: v.plan,
    plan_id: typeof meta.plan_id === 'string' ? meta.plan_id : null,
    version: Number.isSafeInteger(meta.version) ? (meta.version as number) : null,
    registered_at: typeof meta.registered_at === 'string' ? meta.registered_at : null,
  };
}

/** Receipts for outcomes: an array, one receipt, or NDJSON. Only receipts that verify are used. */
function loadReceipts(value: unknown, into: Map<string, unknown>, rejected: CoverageCliOutput['receipts']['rejected']): void {
  const list = Array.isArray(value) ? value : [value];
  list.forEach((doc, index) => {
    const r = verifyReceipt(doc);
    if (r.verdict === 'valid' && r.id !== null) into.set(uuidKey(r.id), doc);
    else rejected.push({ index, id: isObject(doc) ? (doc.id ?? null) : null, reasons: r.reasons });
  });
}

/**
 * Outcome reports: an array, one report, or NDJSON, in ledger order. Only
 * reports that verify and name the plan's subject are used (the server
 * refuses the others); one naming another job is rejected with the reason
 * `other_job` (an outcome counts only for the job it names, issue 26).
 */
function loadOutcomes(value: unknown, subject: PlanSubject): { used: OutcomeRecord[]; rejected: NonNullable<CoverageCliOutput['outcomes']>['rejected'] } {
  const list = Array.isArray(value) ? value : [value];
  const used: OutcomeRecord[] = [];
  const rejected: NonNullable<CoverageCliOutput['outcomes']>['rejected'] = [];
  list.forEach((doc, index) => {
    const v = verifyOutcome(doc);
    if (v.verdict === 'valid' && v.fields && outcomeNamesSubject(v.fields.job_id, subject)) used.push({ ...v.fields });
    else rejected.push({ index, outcome_id: isObject(doc) ? (doc.outcome_id ?? null) : null, reasons: v.fields ? ['other_job'] : v.reasons });
  });
  return { used, rejected };
}

/**
 * `--check-report FILE`: recompute the digest of a server coverage report
 * (the JSON of `GET /api/coverage-reports/{id}`: `{digest, report, ...}`)
 * with the same canonical writer (src/core/coverage/canonical.ts). Exit 0
 * when it equals `digest`, 1 when not (both printed), 2 when the file is not
 * such a report.
 */
export async function checkReport(file: string, io: CliIo, json = false, pdf?: string): Promise<number> {
  const doc = await readJson(file, io, 'a coverage report');
  if (!isObject(doc) || typeof doc.digest !== 'string' || !isObject(doc.report)) {
    throw new CliError(`${file} is not a coverage report as GET /api/coverage-reports/{id} answers it ({digest, report, ...})`);
  }
  const computed = canonicalDigest(doc.report);
  const matches = computed === doc.digest;
  if (pdf !== undefined) {
    if (!isReportContent(doc.report)) throw new CliError(`${file}: its report is not in the form --pdf can draw (format ${safe(String(doc.report.format))})`);
    const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
    await writePdf(pdf, { report: doc.report, digest: doc.digest, digest_verified: matches, report_id: str(doc.report_id), issued_at: str(doc.issued_at), url: str(doc.url), position: Number.isSafeInteger(doc.position) ? (doc.position as number) : null }, io);
  }
  // What the report concludes (its own result, the shared headline): a matching digest says the report is the one
  // issued, not that the job is fully covered.
  const headline = isReportContent(doc.report) ? coverageHeadline(doc.report) : null;
  const result = typeof doc.report.result === 'string' ? doc.report.result : null;
  if (json) await writeAll(io.stdout, JSON.stringify({ matches, declared: doc.digest, computed, report_id: doc.report_id ?? null, result, headline }, null, 2) + '\n');
  else {
    await writeAll(
      io.stdout,
      `coverage report${typeof doc.report_id === 'string' ? ` ${safe(doc.report_id)}` : ''}: digest ${matches ? 'MATCHES' : 'DOES NOT MATCH'}\n  declared: ${safe(doc.digest)}\n  computed: ${computed}\n` +
        `  the report concludes: ${headline !== null ? safe(headline, 1200) : `result ${safe(String(result))}`}${matches ? '' : ' (as the report states it: its digest does not match)'}\n`,
    );
  }
  return matches ? EXIT_OK : EXIT_NOT_VALID;
}

/** A report object with the members the PDF draws (a server report of this format). */
function isReportContent(r: JsonObject): r is JsonObject & CoverageReportContent {
  return r.format === 'aer1-coverage-report/1' && Array.isArray(r.actions) && isObject(r.plan) && isObject(r.integrity) && isObject(r.unplanned) && isObject(r.counts) && isObject(r.coverage) && Array.isArray(r.findings) && Array.isArray(r.does_not_prove);
}

/** Render the PDF and write it to `file` (overwritten); a note on stderr says where. */
async function writePdf(file: string, input: CoveragePdfInput, io: CliIo): Promise<void> {
  if (file === '-' || file === '') throw new CliError('--pdf needs a file name (a PDF is not written to stdout)');
  // Loaded only when asked for: pdfkit and its fonts are not needed by any other command.
  const { renderCoveragePdf } = await import('../../coverage/coverage.pdf');
  const bytes = await renderCoveragePdf(input);
  try {
    writeFileSync(file, bytes);
  } catch (e) {
    throw new CliError(`cannot write ${file}: ${(e as Error).message}`);
  }
  await writeAll(io.stderr, `aer1: coverage report PDF written to ${file} (${bytes.length} bytes)\n`);
}

/** Run the reconciliation on files. Returns the exit code. */
export async function runCoverage(opts: CoverageOptions, io: CliIo): Promise<number> {
  if (opts.checkReport !== undefined) {
    if (opts.plan !== undefined || opts.timeline !== undefined || opts.workflow !== undefined || opts.receipts !== undefined || opts.outcomes !== undefined || (opts.commitment !== undefined && opts.commitment.length > 0)) {
      throw new CliError('--check-report takes no other input');
    }
    return checkReport(opts.checkReport, io, opts.json, opts.pdf);
  }
  if (opts.plan === undefined) throw new CliError('give --plan FILE (or --check-report FILE)');
  if ((opts.timeline === undefined) === (opts.workflow === undefined)) throw new CliError('give --timeline FILE (a job) or --workflow FILE (a workflow receipt)');
  const commitmentFiles = opts.commitment === undefined ? [] : Array.isArray(opts.commitment) ? opts.commitment : [opts.commitment];
  if (opts.workflow !== undefined && commitmentFiles.length > 0) throw new CliError('--commitment checks a timeline, not a workflow');
  const files = [opts.plan, opts.timeline, opts.workflow, ...commitmentFiles, opts.receipts, opts.outcomes].filter((f) => f !== undefined);
  if (files.filter((f) => f === '-').length > 1) throw new CliError('stdin can be read only once');

  const planFile = opts.plan;
  const loaded = loadPlan(await readJson(planFile, io), planFile);
  const { plan } = loaded;
  const receipts = new Map<string, unknown>();
  const rejected: CoverageCliOutput['receipts']['rejected'] = [];
  let record: RecordInput;

  if (opts.timeline !== undefined) {
    if (plan.subject.kind !== 'job') throw new CliError(`the plan covers workflow ${plan.subject.id}: give --workflow`);
    const t = await readJsonOrNdjson(opts.timeline, io);
    let entries: unknown[];
    const commitments: { value: unknown; envelope?: JsonObject; recorded_position: null; attestation?: Attestation }[] = [];
    const trust = trustFromOptions(opts.logVkey, opts.trustedKey);
    if (Array.isArray(t.value)) entries = t.value;
    else if (isObject(t.value) && Array.isArray(t.value.timeline)) {
      // The corpus's commitment form {timeline, commitment}.
      entries = t.value.timeline;
      if (has(t.value, 'commitment')) commitments.push({ value: t.value.commitment, envelope: t.value, recorded_position: null });
    } else if (isObject(t.value) && has(t.value, 'seq')) entries = [t.value]; // NDJSON of one entry
    else throw new CliError(`${opts.timeline} is not a timeline (a JSON array of entries, NDJSON, or {timeline, commitment})`);
    const jobs = new Set(entries.flatMap((e) => (isObject(e) && typeof e.job_id === 'string' ? [e.job_id] : [])));
    if (jobs.size > 0 && !jobs.has(plan.subject.id)) throw new CliError(`the timeline is job ${safe([...jobs][0])}, the plan covers job ${safe(plan.subject.id)}`);
    for (const file of commitmentFiles) {
      // A JSON commitment (self-asserted) or a signed note (ledger-issued / attested when a given key signed it).
      const { value: c, bytes, attestation } = await readCommitmentFile(file, io, trust);
      // Unwrapped from its witness envelope as the ledger's reports do (src/core/coverage/assemble.ts `commitmentOf`).
      const { value: inner, envelope } = commitmentOf(c);
      // Reading 9: entry_count must be written as a JSON integer (`8.0`, `8e0` make the commitment malformed).
      const value = commitmentValueAsWritten(inner, bytes.toString('utf8'), envelope ? ['commitment'] : []);
      commitments.push(envelope ? { value, envelope, recorded_position: null, attestation } : { value, recorded_position: null, attestation });
    }
    record = { kind: 'timeline', entries, commitments };
  } else {
    if (plan.subject.kind !== 'workflow') throw new CliError(`the plan covers job ${safe(plan.subject.id)}: give --timeline`);
    const w = await readJson(opts.workflow!, io);
    let workflow: unknown = w;
    if (isObject(w) && !has(w, 'type') && has(w, 'workflow')) {
      workflow = w.workflow;
      if (has(w, 'step_receipts')) loadReceipts(w.step_receipts, receipts, rejected);
    }
    if (isObject(workflow) && typeof workflow.workflow_id === 'string' && workflow.workflow_id.toLowerCase() !== plan.subject.id) {
      throw new CliError(`the workflow is ${safe(workflow.workflow_id)}, the plan covers workflow ${plan.subject.id}`);
    }
    record = { kind: 'workflow', workflow };
  }
  if (opts.receipts !== undefined) loadReceipts((await readJsonOrNdjson(opts.receipts, io)).value, receipts, rejected);
  const outcomes = opts.outcomes === undefined ? null : loadOutcomes((await readJsonOrNdjson(opts.outcomes, io)).value, plan.subject);

  const report = reconcile({
    plan,
    plan_meta: {
      plan_id: loaded.plan_id,
      version: loaded.version,
      registered_at: loaded.registered_at,
      registered_position: null,
      execution_first_position: null,
      superseded_versions: [],
    },
    record,
    receipts,
    ...(outcomes ? { outcomes: outcomes.used } : {}),
    as_of_position: null,
  });
  const digest = reportDigest(report);
  if (opts.pdf !== undefined) await writePdf(opts.pdf, { report, digest, digest_verified: null, report_id: null, issued_at: null, url: null, position: null }, io);
  if (opts.json) {
    const out: CoverageCliOutput = { digest, report, receipts: { used: receipts.size, rejected }, ...(outcomes ? { outcomes: { used: outcomes.used.length, rejected: outcomes.rejected } } : {}) };
    await writeAll(io.stdout, JSON.stringify(out, null, 2) + '\n');
  } else {
    await writeAll(io.stdout, renderCoverageText(report, digest, { used: receipts.size, rejected }, outcomes ? { used: outcomes.used.length, rejected: outcomes.rejected } : undefined));
  }
  return report.result === 'full_coverage' ? EXIT_OK : EXIT_NOT_VALID;
}

/** The readable report; every input string passes through {@link safe}. */
export function renderCoverageText(r: CoverageReportContent, digest: string, receipts: CoverageCliOutput['receipts'], outcomes?: CoverageCliOutput['outcomes']): string {
  const out: string[] = [];
  const subject = 'job_id' in r.subject ? `job ${safe(r.subject.job_id)}` : `workflow ${safe(r.subject.workflow_id)}`;
  // The shared headline (src/core/coverage/headline.ts): the findings named in the words the page and the PDF use.
  out.push(`coverage: ${subject}: ${r.result === 'full_coverage' && r.findings.length === 0 ? 'FULL COVERAGE' : safe(coverageHeadline(r).replace(/^Coverage: /, ''), 1200)}`);
  out.push(`plan: ${safe(r.plan.title)}${r.plan.plan_id ? ` (${safe(r.plan.plan_id)} v${r.plan.version})` : ''}, digest ${r.plan.digest}, unplanned: ${r.plan.unplanned}`);
  const i = r.integrity;
  out.push(`integrity: ${i.kind} ${i.recorded ? `verdict ${i.verdict}${i.reasons.length ? ` (${i.reasons.map((x) => safe(x)).join(', ')})` : ''}, ${i.entry_count} ${i.kind === 'timeline' ? 'entries' : 'steps'}` : 'not recorded'}`);
  const w = i.recorded_by;
  if (w) {
    const planOwner = w.plan_owner === null ? 'the plan names no recorded_by_owner' : `plan recorded_by_owner ${safe(w.plan_owner)}: ${w.plan_owner_check.replace(/_/g, ' ')}`;
    out.push(w.checked ? `recorded by: ${w.owners.length ? w.owners.map((o) => safe(o)).join(', ') : 'nobody'} (keys ${w.key_names.map((k) => safe(k)).join(', ') || '-'}); ${planOwner}` : `recorded by: not checked offline (files carry no keys or owners); ${planOwner}`);
  }
  out.push(`endpoint commitment: ${i.commitment.state}; truncation ${i.commitment.truncation.replace('_', ' ')}`);
  out.push(`  ${safe(i.commitment.statement, 400)}`);
  const names = [...new Set(i.commitments.filter((c) => c.binding && c.attestation === i.commitment.attestation).flatMap((c) => c.attested_by))].map((n) => safe(JSON.stringify(n)));
  if (i.commitment.attestation !== null) out.push(`  binding commitment: ${i.commitment.attestation === 'ledger_issued' ? 'ledger-issued' : i.commitment.attestation === 'attested_by' ? `attested by ${names.join(', ')}` : 'self-asserted'}${i.commitment.attestation === 'self_asserted' ? " (the producer's own word: give the ledger-issued note with --log-vkey, or a witness-signed note with --trusted-key)" : ''}`);
  if (i.commitments.length > 1) for (const c of i.commitments) out.push(`  commitment ${safe(c.commitment)}: ${c.outcome}, ${safe(attestationLabel({ kind: c.attestation, by: c.attested_by }))}${c.contradicts ? ' (contradicts the timeline)' : ''}`);
  // An action whose required outcome is not confirmed is never shown as plain `covered` (as on the page and the PDF).
  const overridden = r.actions.filter((a) => outcomeOverride(a) !== null);
  out.push(`coverage: ${r.coverage.ratio} (${r.coverage.percent}%)${overridden.length ? `; ${overridden.length} of them with the required outcome not confirmed (${overridden.map((a) => `${safe(a.action_id)}: outcome ${OUTCOME_WORDS[outcomeOverride(a)!]}`).join(', ')})` : ''}`);
  out.push('expected actions:');
  for (const a of r.actions) {
    const seqs = a.evidence.map((e) => e.seq).join(',') || '-';
    const over = outcomeOverride(a);
    if (over) out.push(`  ✗ outcome ${OUTCOME_WORDS[over]}: ${safe(a.action_id)} (${safe(a.tool)}): the call is recorded (covered by its receipt, evidence seq ${seqs}); ${safe(outcomeReason(a.outcome!) ?? '', 400)}`);
    else out.push(`  ${a.status.padEnd(13)} ${safe(a.action_id)} (${safe(a.tool)}) evidence seq ${seqs}${a.over_count_evidence.length ? `, over count seq ${a.over_count_evidence.map((e) => e.seq).join(',')}` : ''}${a.reported_only_evidence.length ? `, reported only seq ${a.reported_only_evidence.map((e) => e.seq).join(',')}` : ''}`);
    out.push(`                ${safe(a.detail, 400)}`);
    if (a.outcome) out.push(`                outcome ${a.outcome.status.toUpperCase()} (${safe(a.outcome.required.effect)} from ${safe(a.outcome.required.from_system)}${a.outcome.required.within_seconds !== null ? ` within ${a.outcome.required.within_seconds} s` : ''}): ${safe(a.outcome.detail, 400)}`);
  }
  if (r.outcomes) {
    const c = r.outcomes.counts;
    out.push(`outcomes (matched by receipt id): ${c.required} required, ${c.confirmed} confirmed, ${c.contradicted} contradicted, ${c.unconfirmed} unconfirmed, ${c.wrong_system} wrong system; ${c.outcomes_matched} outcome report(s) matched`);
    for (const i of r.outcomes.information) out.push(`  information: seq ${i.seq}${i.action_id ? ` (${safe(i.action_id)}, no outcome required)` : ''}: ${i.outcomes.map((o) => `${safe(o.system)} ${safe(o.effect)} ${o.result}`).join('; ')}`);
  }
  if (outcomes && outcomes.rejected.length) out.push(`outcome reports: ${outcomes.used} used, ${outcomes.rejected.length} rejected (${outcomes.rejected.some((x) => x.reasons.includes('other_job')) ? 'do not verify, or name another job' : 'do not verify'}): ${outcomes.rejected.map((x) => `#${x.index + 1} ${x.reasons.join('/')}`).join(', ')}`);
  out.push(`unplanned actions (${r.unplanned.policy}): ${r.unplanned.actions.length ? r.unplanned.actions.map((u) => `seq ${u.seq} ${safe(u.tool ?? '(no tool)')}`).join(', ') : 'none'}`);
  if (r.close) out.push(`close: seq ${Number(r.close.seq)}, the ledger's closing marker (${safe(r.close.tool)}${r.close.receipt_id ? `, receipt ${safe(r.close.receipt_id)}` : ''}): not an action`);
  if (receipts.rejected.length) out.push(`receipts: ${receipts.used} used, ${receipts.rejected.length} rejected (do not verify): ${receipts.rejected.map((x) => `#${x.index + 1} ${x.reasons.join('/')}`).join(', ')}`);
  out.push('findings:');
  if (r.findings.length === 0) out.push('  none');
  for (const f of r.findings) out.push(`  ${f.code}: ${safe(f.message, 400)}`);
  out.push('what this does not prove:');
  for (const t of r.does_not_prove) out.push(`  - ${t}`);
  out.push(`report digest: ${digest}`);
  return out.join('\n') + '\n';
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Register `coverage` on `program`. */
export function registerCoverage(program: Command, ctx: RunContext): void {
  program
    .command('coverage')
    .description('reconcile a job timeline (or a workflow receipt) against its expected-action plan, offline')
    .option('--plan <file>', 'the plan: as registered ({job_id|workflow_id, title, expected_actions, unplanned}) or as GET /api/plans/{id}[/versions/{n}] returns it')
    .option('--timeline <file>', "the job's timeline: a JSON array of entries, NDJSON, or {timeline, commitment}")
    .option('--workflow <file>', 'a workflow receipt, or {workflow, step_receipts}')
    .option('--commitment <file>', 'an endpoint commitment {job_id, final_entry_digest, entry_count, published_at} (or {commitment, witness...}); repeat for every one published: all are judged, and one that shows truncation or substitution is a finding no binding one hides', collect, [])
    .option('--log-vkey <vkey>', "the ledger's log verifier key: a --commitment file that is a note signed by it is ledger-issued")
    .option('--trusted-key <vkey>', 'a witness key you trust: a --commitment file that is a note signed by it is attested (repeatable)', collect, [])
    .option('--receipts <file>', 'receipts for outcomes and provenance: a JSON array or NDJSON; only receipts that verify are used')
    .option('--outcomes <file>', 'outcome reports of the systems that own the effects (NDJSON or a JSON array, in ledger order, as GET /api/jobs/{job_id}/outcomes exports them); only reports that verify are used')
    .option('--check-report <file>', 'recompute the digest of a coverage report as GET /api/coverage-reports/{id} answers it; exit 0 when it equals its digest, 1 otherwise')
    .option('--json', 'print {digest, report, receipts} as JSON ({matches, declared, computed} with --check-report)')
    .option('--pdf <file>', 'also write the report as a PDF to this file (overwritten): the same PDF as GET /coverage/{id}.pdf; with --check-report, of that report')
    .addHelpText(
      'after',
      `
Matching rules, statuses and the digest are documented in docs/coverage.md.

Files carry no keys or owners: who recorded the job is not checked offline,
and a plan's recorded_by_owner is a finding (recorded_by_owner_not_checked),
never satisfied. Receipt corrections (S9) are not followed offline.
Outcome reports (--outcomes) naming the plan's job (or workflow id) are
matched by receipt id in file order (the order GET /api/jobs/{job_id}/outcomes
exports: ledger order); one naming another job is rejected (other_job).
Who reported them is not checked offline (the ledger accepts each only from
a key that speaks for its system), nor whether other jobs' entries name the
same receipts.

A --commitment file is JSON (self-asserted) or a signed note whose text is
the commitment's JSON text and a newline (GET /api/jobs/{id}/endpoint gives
the ledger's): full coverage needs a binding commitment that is
ledger-issued (--log-vkey) or attested (--trusted-key); a binding one that
is only self-asserted is the finding commitment_self_asserted.

Exit codes: 0 full coverage (every expected action covered, the timeline
valid with a binding ledger-issued or attested endpoint commitment, no
flagged unplanned action);
1 any finding; 2 usage error, unreadable input or an invalid plan.
With --check-report: 0 the recomputed digest equals the report's digest,
1 it does not, 2 not a coverage report.`,
    )
    .action(async (opts: CoverageOptions) => {
      ctx.exitCode = await runCoverage(opts, ctx.io);
    });
}
