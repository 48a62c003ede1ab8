/**
 * What `aer1 verify-pack` checks in an evidence pack (`aer1-evidence-pack/1`,
 * src/core/pack/format.ts, docs/evidence-pack.md), offline, as phases over
 * the pack's lines:
 *
 * 1. manifest (manifest.ts): every member's SHA-256 against its chunk, every
 *    chunk against the final manifest; a listed member the pack lacks is
 *    `member_missing`, said first and once, and what depends on it is listed
 *    as not checked, not blamed on others;
 * 2. checkpoint (checkpoint.ts): `vkey`, `checkpoint_signature`,
 *    `cosignatures`, `timestamp` (RFC 3161) on the `log/checkpoint` note,
 *    and the `log/nostr` anchor (`nostr_*`);
 * 3. events (events.ts): `leaf_hash`, `inclusion`, `leaf_event` for every
 *    `event/<position>`;
 * 4. records (members.ts, records.ts): `member_name`, `duplicate`,
 *    `leaf_bytes`, `plan_digest`, and the receipts' and outcome reports'
 *    verdicts; a record without its bytes is withheld;
 * 5. verdicts (verdicts.ts): the timeline chain with every commitment, the workflow;
 * 6. recomputation (recompute.ts): every coverage report recomputed with
 *    the core's assembler and `reconcile` (`report_recomputed`);
 * 7. subject (subject.ts): every event and record on the subject's streams,
 *    every named receipt held; a receipt stated not recorded is listed, never a pass
 *    unless a signed statement says its stream had no event (phase 8);
 * 8. completeness (streams.ts, issue 30): the `log/stream-heads` statements
 *    verify, are the pack's checkpoint's, name every stream the subject
 *    spans, and the pack holds each from its stated head back to its first
 *    event (`stream_heads`, `stream_incomplete`, `stream_unlisted`).
 *
 * The first three run as each line is read (readPack); the rest after the
 * last line. Every failure names its member and a {@link PackErrorCode}; all
 * are collected, none stops the others, but one: a checkpoint that does not
 * verify under --vkey (issue 27) is the one failure, and checking stops there.
 */
import { isObject } from '../aer1';
import { finishManifest } from './manifest';
import { checkErasures } from './events';
import { readPack } from './read';
import { recomputeReports, subjectResult } from './recompute';
import { checkRecords, LeafData } from './records';
import { PackDeps, PackPolicy, PackReport, Tally } from './result';
import { bindSubject } from './subject';
import { checkStreams } from './streams';
import { timelineVerdict, workflowVerdict } from './verdicts';

export * from './result';

/** Check the pack whose lines (without their LF) `lines` yields, against `policy` (see the module comment). Throws only when `lines` does. */
export async function checkPack(lines: AsyncIterable<Buffer>, policy: PackPolicy, deps: PackDeps): Promise<PackReport> {
  const t = new Tally();
  const read = await readPack(lines, policy, deps, t);
  const subject = read.header && isObject(read.header.subject) ? (read.header.subject as { kind: string; id: string }) : null;
  const cp = read.checkpoint;
  if (cp.stopped !== null) {
    // One failure, and what was not checked because of it (never counted as separate failures).
    t.notChecked.push(`everything after log/checkpoint (manifest, inclusion proofs, records, verdicts, reports): the checkpoint does not verify under --vkey, and every other check depends on it`);
    return {
      verified: false,
      is_pack: read.isPack,
      subject,
      checkpoint: null,
      cosignatures: [],
      timestamp: null,
      nostr: null,
      counts: t.counts,
      passed: {},
      verdicts: { receipts: {}, timeline: null, workflow: null, outcomes: {} },
      reports: [],
      subject_result: null,
      completeness: { statements: 0, streams: 0, proven: false, not_provable_before: null },
      failures: [{ member: 'log/checkpoint', check: 'checkpoint_signature', detail: cp.stopped }],
      not_checked: t.notChecked,
    };
  }
  const missing = read.manifest.missing;
  // Each listed member the pack lacks is one failure (member_missing) and is itself not checked; what depends on it is listed by its phase.
  for (const name of missing) t.notChecked.push(`${name} (missing): listed in the manifest but not in the pack, so nothing it holds is checked`);
  finishManifest(read.manifest, t.counts.members, t);
  if (!read.header) t.fail('header', 'format', 'the pack has no header');
  if (!cp.note) t.fail('log/checkpoint', 'checkpoint_signature', 'the pack has no checkpoint');

  const { records: r, events } = read;
  checkErasures(events, t);
  const leaf = new LeafData(events, missing, t);
  const verdicts = checkRecords(r, events, leaf, deps, t);
  const timeline = timelineVerdict(r, subject, missing, t);
  const workflow = workflowVerdict(r, verdicts.receiptDocs, t);
  const reports = recomputeReports(r, events, leaf, missing, { log_vkey: policy.log.vkey, trusted: policy.commitmentKeys ?? [] }, t);
  const bound = bindSubject({ receipts: r.receipts, entries: r.entries, commitments: r.commitments, workflows: r.workflows, plans: r.plans, reports: r.reports, outcomes: r.outcomes, notRecorded: r.notRecorded, erased: r.erased, subject, events, missing }, t);
  const { completeness, backedNotRecorded } = checkStreams(
    { statements: read.statements, log: policy.log, cp: cp.cp, links: read.links, events, missing, subject, record: bound.record, records: r, named: bound.named },
    t,
  );
  // A member the manifest lists and the pack lacks is said first (stable otherwise: the order the checks found them).
  const failures = [...t.failures].sort((a, b) => Number(b.check === 'member_missing') - Number(a.check === 'member_missing'));

  // Verified only when every member was checked and the pack is shown complete: anything withheld, stated not recorded
  // without a signed statement backing it, or a stream not provably whole (format 1/2 history) leaves something unchecked.
  const c = t.counts;
  const verified =
    read.isPack && failures.length === 0 && (t.passed.checkpoint_signature ?? 0) > 0 && c.withheld === 0 && c.withheld_records === 0 && c.not_recorded === backedNotRecorded && completeness.proven;
  return {
    verified,
    is_pack: read.isPack,
    subject,
    checkpoint: cp.cp ? { origin: cp.cp.origin, size: cp.cp.size, root: cp.cp.rootHash.toString('base64') } : null,
    cosignatures: cp.cosigs,
    timestamp: cp.timestamp,
    nostr: cp.nostr,
    counts: c,
    passed: t.passed,
    verdicts: { receipts: verdicts.receipts, timeline, workflow, outcomes: verdicts.outcomes },
    reports,
    subject_result: subjectResult(subject, r.reports, verified),
    completeness,
    failures,
    not_checked: t.notChecked,
  };
}

