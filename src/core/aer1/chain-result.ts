/**
 * The result of a timeline (S7): the checks, reasons and verdict from the
 * findings a {@link TimelineVerifier} gathered, and the -06 recognition
 * (S7.4).
 */
import { Check, describe, VerificationResultBase } from './result';
import type { EntryOutcome } from './chain-entry';
import { FailureList, LinkState, RunFindings } from './chain-state';

/** The result of verifying a timeline. */
export interface TimelineResult extends VerificationResultBase {
  kind: 'chain';
  /** -07 when the links hold under S7.1, -06 when they hold only under the historical construction. */
  construction: '-07' | '-06' | null;
  job_id: string | null;
  entry_count: number;
  /** The recomputed -07 digest of the last entry: what an endpoint commitment must name. */
  final_entry_digest: string | null;
  /** True when the last entry closes the job. */
  closed: boolean;
  /** Per entry, when collected (arrays); omitted by the streaming CLI. */
  entries?: EntryOutcome[];
  /** Count of entries per provenance class, as recorded (S7.3: chaining upgrades nothing). */
  provenance: Record<string, number>;
  /** Always false from the chain alone (S7.3); only an endpoint commitment can bind the end. */
  truncation_excluded: false;
  /**
   * Entries whose content was erased (issue 29), when any: how many, the first
   * ones named, how many links were recomputed, and how many touch them
   * (neither re-checked nor failed).
   * The verdict is then never `valid`: `incomplete` when nothing else fails.
   */
  erased?: { entries: number; listed: string[]; links_rechecked: number; links_not_rechecked: number };
}

export const CHAIN_LIMITS = [
  'The chain check alone is not truncation-proof: a rebuilt shorter chain verifies (S7.3). Only an external endpoint commitment can bind the end.',
  'Chaining gives tamper evidence for the recorded sequence, not truth about the world; a LOGGED BY AGENT entry remains an agent report (S7.3).',
];

/** Entries per provenance class. Null prototype: a class such as "constructor" or "__proto__" is counted, not confused with Object.prototype. */
function provenanceCounts(run: RunFindings): Record<string, number> {
  const counts = Object.create(null) as Record<string, number>;
  for (const [k, slot] of run.classes) counts[k] = slot.count;
  return counts;
}

/**
 * The result over `count` entries from the findings of their run and the
 * link state after the last (`entries`: their outcomes, when collected).
 * Call once: the findings take the result's last reasons.
 */
export function timelineResult(run: RunFindings, link: LinkState, count: number, jobId: string | null, entries: EntryOutcome[] | null): TimelineResult {
  const { findings, failures } = run;
  const checks: Check[] = [];
  const aggregate = (name: string, failed: FailureList, prefix: string, okDetail?: string): void => {
    if (failed.count === 0) checks.push(okDetail ? { name, ok: true, detail: okDetail } : { name, ok: true });
    else checks.push({ name, ok: false, detail: failed.text(prefix) });
  };
  const empty = count === 0;
  checks.push(empty ? { name: 'non_empty', ok: false, detail: 'a timeline is a non-empty array (S7.2)' } : { name: 'non_empty', ok: true, detail: `${count} entries` });
  if (empty) findings.reason('empty_timeline');
  if (!empty) {
    // Issue 29: an erased entry's object, members and canonical bytes are gone; these checks hold only for the entries still held.
    const erased = failures.erased.count;
    const heldText = (n: number) => (n === 1 ? 'entry' : `${n} entries`);
    const onContent = (name: string, failed: FailureList, prefix: string): void => {
      if (erased === 0 || failed.count > 0) aggregate(name, failed, prefix);
      else if (erased === count) checks.push({ name, ok: null, detail: `not re-checkable: the content of every entry (${count}) was erased` });
      else checks.push({ name, ok: true, detail: `holds for the ${heldText(count - erased)} still held; ${erased} erased ${erased === 1 ? 'entry' : 'entries'} not re-checked` });
    };
    onContent('entries.objects', failures.entry, 'not JSON objects');
    onContent('entries.members', failures.members, 'missing or malformed members');
    aggregate('entries.seq', failures.seq, 'seq is not an integer');
    aggregate('entries.close', failures.close, 'close is not a boolean');
    onContent('entries.canonical_bytes', failures.base64, 'canonical_bytes is not strict base64');
    aggregate('entries.provenance_class', failures.provenance, 'unknown provenance class');
    if (run.genesis) checks.push(run.genesis);
    aggregate('sequence', failures.contiguous, 'not contiguous from 1');
    aggregate('one_job', failures.job, `not job ${describe(jobId)}`, jobId ? `job ${jobId}` : undefined);
    aggregate('close_only_last', failures.closeNotLast, 'close set before the end');
    if (link.closedAt !== null || link.lastClosed) checks.push({ name: 'closed', ok: true });
    else {
      checks.push({ name: 'closed', ok: false, detail: 'the last entry does not carry close: true' });
      findings.reason('not_closed');
    }
  }

  // -06 recognition (S7.4): -07 links fail but every link equals SHA-256 of the previous entry's bytes.
  let construction: TimelineResult['construction'] = null;
  if (!empty) {
    const { links07, links06, linksEvaluated } = run;
    if (links07 && failures.notEvaluated.count === 0) construction = '-07';
    else if (!links07 && links06 && failures.notEvaluated.count === 0 && linksEvaluated > 0) construction = '-06';
  }
  if (construction === '-06') {
    findings.drop('link_mismatch');
    findings.reason('historical_06_construction');
    checks.push({ name: 'links', ok: false, detail: 'every link follows the historical -06 construction (digest of the canonical bytes only); -07 links do not hold (S7.4)' });
  } else if (!empty && count > 1) {
    if (failures.link.count > 0) checks.push({ name: 'links', ok: false, detail: failures.link.text('recomputed -07 digests do not match') });
    else if (failures.notEvaluated.count > 0) checks.push({ name: 'links', ok: null, detail: failures.notEvaluated.text('not evaluated (previous entry malformed)') });
    else if (failures.linkErased.count > 0) {
      checks.push({ name: 'links', ok: null, detail: `${run.linksEvaluated} links recomputed under S7.1 and hold; ${failures.linkErased.text('not re-checkable (an entry they join was erased)')}` });
    }
    else checks.push({ name: 'links', ok: true, detail: `${run.linksEvaluated} links recomputed under S7.1` });
  }
  if (failures.erased.count > 0) checks.push({ name: 'erased', ok: null, detail: failures.erased.text('content erased (issue 29), not re-checked') });
  checks.push({ name: 'truncation', ok: null, detail: 'not excluded by the chain alone (S7.3): needs a binding endpoint commitment' });
  findings.checks.push(...checks);

  const result: TimelineResult = {
    kind: 'chain',
    verdict: findings.verdict(),
    reasons: findings.reasons,
    checks: findings.checks,
    limits: [...CHAIN_LIMITS],
    construction,
    job_id: jobId,
    entry_count: count,
    final_entry_digest: link.lastDigest07,
    closed: link.lastClosed,
    provenance: provenanceCounts(run),
    truncation_excluded: false,
  };
  if (failures.erased.count > 0) {
    result.erased = { entries: failures.erased.count, listed: [...failures.erased.listed], links_rechecked: run.linksEvaluated, links_not_rechecked: failures.linkErased.count };
    if (result.verdict === 'valid') result.verdict = 'incomplete';
  }
  if (entries) result.entries = entries;
  return result;
}
