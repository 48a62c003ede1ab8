/**
 * The recomputation phase: every coverage report's digest (`report_digest`),
 * its bytes against its event (`leaf_bytes`), and the report recomputed
 * from the pack's events as of its position with the core's one assembler
 * (src/core/coverage/assemble.ts, as the server builds it) and `reconcile`
 * (`report_recomputed`: the same digest).
 */
import { isObject } from '../aer1';
import type { CommitmentTrust } from '../aer1/attestation';
import { assembleReportInput } from '../coverage/assemble';
import { canonicalDigest, canonicalJson } from '../coverage/canonical';
import { coverageHeadline } from '../coverage/headline';
import type { PlanSubject } from '../coverage/plan';
import { CoverageReportContent, reconcile, Recorders, reportDigest } from '../coverage/reconcile';
import { PackEvents, retainedOf } from './events';
import type { PackRecords } from './members';
import type { LeafData } from './records';
import { PackReport, Tally } from './result';

/** A report recomputed, or why it could not be (in words). */
type Recomputed = { ok: true; report: CoverageReportContent } | { ok: false; why: string };

/**
 * A job report member's `other_jobs` (the server's statement: receipt id ->
 * the other jobs whose entries name it as of the report, issue 26) as the
 * reconciliation's input; absent (a pack written before it) is no other job.
 * A malformed value is refused (the report is then not recomputed).
 */
function otherJobs(v: unknown): { ok: true; jobs: Map<string, string[]> } | { ok: false; why: string } {
  if (v === undefined || v === null) return { ok: true, jobs: new Map() };
  if (!isObject(v)) return { ok: false, why: 'its other_jobs is not an object {receipt_id: [job_id, ...]}' };
  const jobs = new Map<string, string[]>();
  for (const [k, list] of Object.entries(v)) {
    if (!Array.isArray(list) || !list.every((j) => typeof j === 'string')) return { ok: false, why: `its other_jobs of ${JSON.stringify(k)} is not a list of job ids` };
    jobs.set(k, list as string[]);
  }
  return { ok: true, jobs };
}

/**
 * The report `stored` recomputed from the pack's events at or below its
 * `as_of_position` (none of them withheld); the recorders and other jobs
 * are the report member's (the server's word: keys and other jobs are not
 * in the pack's events).
 */
function recompute(stored: CoverageReportContent, recordersIn: unknown, otherJobsIn: unknown, events: PackEvents, trust: CommitmentTrust): Recomputed {
  const asOf = stored.as_of_position;
  if (typeof asOf !== 'number') return { ok: false, why: 'the report has no as_of_position' };
  const subj = stored.subject as { job_id?: string; workflow_id?: string };
  const kind = subj.job_id !== undefined ? 'job' : 'workflow';
  const id = (subj.job_id ?? subj.workflow_id) as string;
  const evs = [...events.entries()].filter(([p]) => p <= asOf).sort((a, b) => a[0] - b[0]);
  if (evs.some(([, e]) => e === null)) return { ok: false, why: 'an event it reads is withheld from this pack' };
  // Erased events (issue 29) are read from what their PayloadsErased event in the pack retained, as the server reads them.
  const read = evs.map(([p, e]) => (e!.data === null && e!.erased ? { ...e!, data: retainedText(events, p), erased: e!.erased } : e!));
  if (read.some((e) => e.data === null)) return { ok: false, why: 'an event it reads was erased (issue 29) and its erasure event is not in the pack: its content can no longer be re-read' };
  const rin = isObject(recordersIn) ? (recordersIn as { record?: unknown; receipts?: unknown }) : {};
  const recorders = {
    record: (rin.record ?? null) as Recorders | null,
    receipts: new Map(Object.entries(isObject(rin.receipts) ? (rin.receipts as Record<string, Recorders>) : {})),
  };
  const others = kind === 'job' ? otherJobs(otherJobsIn) : null;
  if (others && !others.ok) return others;
  const subject: PlanSubject = kind === 'job' ? { kind, id } : { kind, id: id.toLowerCase() };
  const assembled = assembleReportInput(
    read.map((e) => ({ ...e, data: e.data as string })),
    { subject, asOf, trust, recorders, ...(others ? { otherJobs: others.jobs } : {}) },
  );
  if (!assembled.ok && assembled.code === 'plan_erased') return { ok: false, why: `the plan version in force (position ${assembled.position}) was erased` };
  if (!assembled.ok) return { ok: false, why: 'no plan version at or below its position is in the pack' };
  return { ok: true, report: reconcile(assembled.input) };
}

/** The retained data of an erased event as JSON text, or null (see {@link retainedOf}). */
function retainedText(events: PackEvents, position: number): string | null {
  const kept = retainedOf(events, position);
  return kept === null ? null : JSON.stringify(kept);
}

/** Whether an event at or below the report's position was erased. */
function readsErased(content: CoverageReportContent, events: PackEvents): boolean {
  const asOf = content.as_of_position;
  return typeof asOf === 'number' && [...events].some(([p, e]) => p <= asOf && e?.erased !== undefined);
}

/** Check and recompute every report of the pack (see the module comment). */
export function recomputeReports(r: PackRecords, events: PackEvents, leaf: LeafData, missing: ReadonlySet<string>, trust: CommitmentTrust, t: Tally): PackReport['reports'] {
  const out: PackReport['reports'] = [];
  for (const x of r.reports) {
    const d = leaf.of(x, 'CoverageReportIssued');
    const content = x.report as CoverageReportContent;
    if (canonicalDigest(content) !== x.digest) t.fail(x.member, 'report_digest', `the report's canonical SHA-256 is ${canonicalDigest(content)}, not its digest ${x.digest}: altered`);
    else t.pass('report_digest');
    if (d) leaf.same(x, canonicalJson(d.report) === canonicalJson(x.report) && d.digest === x.digest && d.report_id === x.report_id, 'the report');
    let recomputed: string | null = null;
    let why: string;
    try {
      const got = recompute(content, x.recorders, x.other_jobs, events, trust);
      why = got.ok ? '' : got.why;
      if (got.ok) recomputed = reportDigest(got.report);
    } catch (e) {
      // A report member malformed past what the reconciliation reads (its digest check names it).
      why = (e as Error).message;
    }
    const missingList = [...missing].join(', ');
    if (recomputed === x.digest) t.pass('report_recomputed');
    // With a listed member missing the report's inputs are incomplete: the missing member is the failure, the report is not judged.
    // A report issued before evidence it counted was erased (issue 29) read content that is gone: not recomputable, said so.
    else if (recomputed !== null && readsErased(content, events)) {
      t.notChecked.push(`${x.member}: no longer recomputable: an event it reads was erased after it was issued (its stored digest stands, checked above)`);
      out.push({ report_id: x.report_id, digest: x.digest, recomputed: null }); // what was recomputed from what is left is no digest of this report
      continue;
    }
    else if (recomputed === null && readsErased(content, events)) {
      // Its inputs (its plan version, say) were erased after it was issued: nothing to recompute from; its stored digest stands.
      t.notChecked.push(`${x.member}: no longer recomputable: ${why} (an event it reads was erased after it was issued; its stored digest stands, checked above)`);
    }
    else if (recomputed !== null && missing.size) {
      t.notChecked.push(`${x.member}: not recomputed: ${missingList}, missing from the pack, may be among its inputs`);
      out.push({ report_id: x.report_id, digest: x.digest, recomputed: null }); // a digest of partial inputs is no recomputation of this report
      continue;
    }
    else if (recomputed !== null) t.fail(x.member, 'report_recomputed', `reconciling the pack's plan and records as of position ${String(content.as_of_position)} gives digest ${recomputed}, the report says ${x.digest}`);
    else if (missing.size) t.notChecked.push(`${x.member}: not recomputed: ${why} (${missingList} missing from the pack)`);
    else t.fail(x.member, 'report_recomputed', `not recomputed: ${why}`);
    out.push({ report_id: x.report_id, digest: x.digest, recomputed });
  }
  return out;
}

/** {@link PackReport.subject_result}: the subject's report (a coverage_report pack), else the newest report held. */
export function subjectResult(subject: { kind: string; id: string } | null, reports: PackRecords['reports'], established: boolean): PackReport['subject_result'] {
  const own = subject?.kind === 'coverage_report' ? reports.find((r) => r.report_id === subject.id) : [...reports].sort((a, b) => b.position - a.position)[0];
  if (!own || !isObject(own.report)) return null;
  const c = own.report as Partial<CoverageReportContent>;
  const drawable = typeof c.result === 'string' && Array.isArray(c.findings) && isObject(c.coverage) && Array.isArray(c.actions);
  let headline: string | null = null;
  try {
    headline = drawable ? coverageHeadline(c as CoverageReportContent) : null;
  } catch {
    headline = null; // a malformed report (its digest check says so): its result alone is shown
  }
  return { report_id: own.report_id, position: own.position, result: typeof c.result === 'string' ? c.result : String(c.result), headline, established };
}
