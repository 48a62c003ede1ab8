/**
 * The completeness phase (issue 30, docs/evidence-pack.md "Completeness"):
 * the pack's `log/stream-heads` statements, signed by the log key as of the
 * pack's checkpoint, say where each stream the subject spans ended; the pack
 * must hold each of them from that head back to the stream's first event.
 *
 * - `stream_heads`: no statement; a statement that does not verify under
 *   --vkey, or is as of another checkpoint; a stated head the pack's own
 *   proven events contradict (another stream's event, another hash, an event
 *   of the stream after it): a false statement, signed.
 * - `stream_incomplete`: an event of a stated stream is not in the pack,
 *   named by stream and ledger position (found by walking `stream_prev` back
 *   from the head; format 1/2 events, which have no `stream_prev`, by their
 *   stream position), and for a receipt or an answer set the action that
 *   named it.
 * - `stream_unlisted`: an event of the pack on a stream no statement names,
 *   or a stream the subject spans (its timeline or workflow, every receipt
 *   named or held, plans, reports, outcomes, the answer set of every named
 *   receipt) that no statement names.
 *
 * Events of `erasure:` streams are evidence of erasures, not of the subject:
 * the pack holds the ones that erased its members, and no statement names them.
 */
import { sha256Hex } from '../aer1';
import { answersStreamId, inAnswerSet, outcomeIdsOf, parseAnswersStreamId } from '../ledger/answer-sets';
import { Checkpoint, isTlogError, NoteVerifier, verifyStreamHeads } from '../tlog';
import { PackEvents } from './events';
import { memberName } from './format';
import type { PackRecords } from './members';
import { PackLeafEvent, PackReport, Tally } from './result';

/** What the leaf of one `event/<position>` member says of its stream. */
export interface StreamLink {
  stream_id: string;
  stream_position: number;
  /** Format 3 only; null for format 1/2. */
  stream_prev: number | null;
  format: number;
  type: string;
  /** Lowercase hex SHA-256 of the leaf bytes (the event hash a statement names). */
  event_hash: string;
  /** For `OutcomeReported`: the receipt, job and outcome its leaf names. */
  outcome: { receipt_id: unknown; job_id: unknown; outcome_id: unknown } | null;
}

/** The links of a pack's events by position: every leaf the pack carries that is proven under its checkpoint, whatever its payload. */
export type PackLinks = Map<number, StreamLink>;

/** The link an event's leaf gives. */
export function linkOf(ev: PackLeafEvent, leaf: Buffer): StreamLink {
  return {
    stream_id: ev.stream_id,
    stream_position: ev.stream_position,
    stream_prev: ev.format === 3 && typeof ev.stream_prev === 'number' ? ev.stream_prev : null,
    format: ev.format,
    type: ev.type,
    event_hash: sha256Hex(leaf),
    outcome: outcomeIdsOf(ev),
  };
}

/** What the completeness phase reads. */
export interface StreamsInput {
  statements: readonly { member: string; note: string }[];
  log: NoteVerifier;
  cp: Checkpoint | null;
  links: PackLinks;
  events: PackEvents;
  missing: ReadonlySet<string>;
  /** The job or workflow whose records the pack holds (null: no subject, already a failure). */
  record: { kind: 'job' | 'workflow'; id: string } | null;
  records: PackRecords;
  /** Receipt ids (lowercase) the subject's entries or workflow steps name, with the action that names each. */
  named: ReadonlyMap<string, string>;
}

type Completeness = PackReport['completeness'];

/** Check the pack's stream-heads statements against its events (see the module comment). Returns what they establish, and how many `recorded: false` members a statement backs (head 0). */
export function checkStreams(p: StreamsInput, t: Tally): { completeness: Completeness; backedNotRecorded: number } {
  const before = t.failures.length;
  const none: Completeness = { statements: 0, streams: 0, proven: false, not_provable_before: null };
  if (p.statements.length === 0) {
    t.fail('log/stream-heads', 'stream_heads', 'the pack carries no stream-heads statement: nothing shows it holds each of its streams to the end');
    return { completeness: none, backedNotRecorded: 0 };
  }
  if (p.cp === null) return { completeness: none, backedNotRecorded: 0 };
  const cp = p.cp;
  // Stated heads, by stream id, from every statement that verifies and is the pack's checkpoint's.
  const heads = new Map<string, { position: number; hash: string | null; member: string }>();
  let ok = 0;
  for (const s of p.statements) {
    let st;
    try {
      st = verifyStreamHeads(s.note, [p.log], cp.origin).statement;
    } catch (e) {
      t.fail(s.member, 'stream_heads', isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message);
      continue;
    }
    if (st.size !== cp.size || !Buffer.from(st.rootHash).equals(cp.rootHash)) {
      t.fail(s.member, 'stream_heads', `the statement is as of size ${st.size} (root ${Buffer.from(st.rootHash).toString('base64')}); the pack's checkpoint is size ${cp.size} (root ${cp.rootHash.toString('base64')})`);
      continue;
    }
    ok++;
    t.pass('stream_heads');
    for (const h of st.heads) {
      const seen = heads.get(h.streamId);
      if (seen && (seen.position !== h.position || seen.hash !== h.eventHash)) t.fail(s.member, 'stream_heads', `stream ${h.streamId} is stated with head ${h.position} here and ${seen.position} in ${seen.member}`);
      else heads.set(h.streamId, { position: h.position, hash: h.eventHash, member: s.member });
    }
  }
  if (ok === 0) return { completeness: { ...none, statements: 0 }, backedNotRecorded: 0 };

  const byStream = new Map<string, Map<number, number>>();
  for (const [position, l] of p.links) (byStream.get(l.stream_id) ?? byStream.set(l.stream_id, new Map()).get(l.stream_id)!).set(l.stream_position, position);
  const unknownGaps = [...p.events.values()].some((e) => e === null || (e.erased !== undefined && e.format !== 3)) || [...p.missing].some((m) => m.startsWith('event/'));
  let legacyMax: number | null = null;
  let unchecked = 0;
  const what = (stream: string): string => {
    const rid = stream.startsWith('receipt:') ? stream.slice('receipt:'.length) : parseAnswersStreamId(stream)?.receiptId;
    const by = rid ? p.named.get(rid) : undefined;
    return by ? ` (${stream.startsWith('answers:') ? 'outcomes answering the receipt of ' : 'the receipt of '}${by})` : '';
  };
  const gap = (stream: string, position: number | null, detail: string): void => {
    if (position !== null && p.missing.has(memberName.event(position))) {
      unchecked++; // member_missing already says it; the stream is not shown whole
      return;
    }
    if (position !== null && p.events.has(position) && p.events.get(position) !== null) return; // held, but its leaf failed a check already (inclusion, leaf_event)
    if (position !== null && p.events.has(position) && p.events.get(position) === null) {
      t.notChecked.push(`stream ${stream}: the event at position ${position} is withheld, so the stream cannot be shown complete`);
      unchecked++;
      return;
    }
    if (position === null && unknownGaps) {
      t.notChecked.push(`stream ${stream}: ${detail}; withheld or erased format 1/2 leaves may hold it`);
      unchecked++;
      return;
    }
    t.fail(stream, 'stream_incomplete', `${detail}${what(stream)}`);
  };

  for (const [stream, h] of heads) {
    const set = parseAnswersStreamId(stream);
    if (set) {
      // An answer set: its newest member is the stated head, held; no member after it; each member's stream named.
      for (const [position, l] of p.links) {
        if (!l.outcome || !inAnswerSet(set, l.type, l.outcome.receipt_id, l.outcome.job_id)) continue;
        if (position > h.position) t.fail(memberName.event(position), 'stream_heads', `an outcome answering receipt ${set.receiptId} at position ${position}, after the stated newest (${h.position}) of ${stream}: the statement is false`);
        if (typeof l.outcome.outcome_id === 'string' && !heads.has(`outcome:${l.outcome.outcome_id.toLowerCase()}`)) t.fail(memberName.event(position), 'stream_unlisted', `outcome ${l.outcome.outcome_id} answers receipt ${set.receiptId} but its stream is not named in the statements`);
      }
      if (h.position === 0) continue;
      const l = p.links.get(h.position);
      if (!l) gap(stream, h.position, `the newest outcome answering receipt ${set.receiptId}, the event at position ${h.position}, is not in the pack`);
      else if (!l.outcome || !inAnswerSet(set, l.type, l.outcome.receipt_id, l.outcome.job_id)) t.fail(stream, 'stream_heads', `the stated newest answer, position ${h.position}, is a ${l.type} event of ${l.stream_id}, not an outcome answering receipt ${set.receiptId}`);
      else if (l.event_hash !== h.hash) t.fail(stream, 'stream_heads', `the event at position ${h.position} has hash ${l.event_hash}; the statement says ${String(h.hash)}`);
      continue;
    }
    const held = byStream.get(stream);
    for (const [sp, position] of held ?? []) if (position > h.position) t.fail(memberName.event(position), 'stream_heads', `event #${sp} of ${stream} is at position ${position}, after the stated head (${h.position === 0 ? 'no event' : h.position}) as of size ${cp.size}: the statement is false`);
    // Walk back from the head to the stream's first event.
    let pos = h.position;
    let expect: number | null = null;
    while (pos > 0) {
      const l = p.links.get(pos);
      if (!l) {
        gap(stream, pos, `${expect === null ? 'its stated head, ' : `event #${expect} of the stream, `}the event at position ${pos}, is not in the pack`);
        break;
      }
      if (l.stream_id !== stream) {
        t.fail(memberName.event(pos), 'stream_heads', `the event at position ${pos} is on stream ${l.stream_id}, not ${stream}${expect === null ? ' (its stated head)' : ''}`);
        break;
      }
      if (expect === null && l.event_hash !== h.hash) t.fail(memberName.event(pos), 'stream_heads', `the head of ${stream} has hash ${l.event_hash}; the statement says ${String(h.hash)}`);
      if (expect !== null && l.stream_position !== expect) {
        t.fail(memberName.event(pos), 'stream_incomplete', `the event at position ${pos} is #${l.stream_position} of ${stream}; the next event names it as #${expect}`);
        break;
      }
      let next: number | undefined;
      if (l.stream_prev !== null) next = l.stream_prev;
      else {
        legacyMax = Math.max(legacyMax ?? 0, pos);
        next = l.stream_position === 1 ? 0 : held?.get(l.stream_position - 1);
      }
      if (next === 0 && l.stream_position !== 1) {
        t.fail(memberName.event(pos), 'stream_incomplete', `event #${l.stream_position} of ${stream} names no previous event`);
        break;
      }
      if (next === undefined) {
        gap(stream, null, `event #${l.stream_position - 1} of the stream is not in the pack`);
        break;
      }
      expect = l.stream_position - 1;
      pos = next;
    }
  }

  // Every event on a named stream (erasures aside), one failure per stream that is not.
  const reported = new Set<string>();
  for (const [position, l] of [...p.links].sort((a, b) => a[0] - b[0])) {
    if (l.stream_id.startsWith('erasure:') || heads.has(l.stream_id) || reported.has(l.stream_id)) continue;
    reported.add(l.stream_id);
    t.fail(memberName.event(position), 'stream_unlisted', `an event of stream ${l.stream_id}, which no stream-heads statement in the pack names`);
  }
  // Every stream the subject spans is named.
  if (p.record) {
    const need = new Set<string>([p.record.kind === 'job' ? `timeline:${p.record.id}` : `workflow:${p.record.id}`]);
    for (const x of p.named.keys()) {
      need.add(`receipt:${x}`);
      need.add(answersStreamId(x, p.record));
    }
    for (const r of [...p.records.receipts, ...p.records.notRecorded]) if (r.id !== '') need.add(`receipt:${r.id}`);
    for (const x of p.records.plans) need.add(`plan:${x.plan_id}`);
    for (const x of p.records.reports) need.add(`coverage:${x.report_id}`);
    for (const x of p.records.outcomes) need.add(`outcome:${x.id}`);
    for (const s of need) if (!heads.has(s) && !reported.has(s)) t.fail(s, 'stream_unlisted', `the subject spans stream ${s}${what(s)}, which no stream-heads statement in the pack names`);
  }
  const backedNotRecorded = p.records.notRecorded.filter((r) => heads.get(`receipt:${r.id}`)?.position === 0).length;
  for (const r of p.records.notRecorded) {
    if (heads.get(`receipt:${r.id}`)?.position !== 0) continue;
    t.pass('stream_heads');
    // The ledger's word is now its signed statement: said so, not listed as unchecked.
    const k = t.notChecked.findIndex((x) => x.startsWith(`${r.member}: the ledger states`));
    if (k >= 0) t.notChecked.splice(k, 1);
  }
  const clean = t.failures.slice(before).every((f) => f.check !== 'stream_heads' && f.check !== 'stream_incomplete' && f.check !== 'stream_unlisted');
  if (legacyMax !== null) t.notChecked.push(`completeness not provable before position ${legacyMax + 1}: events up to it are in format 1 or 2, which carry no stream_prev`);
  return { completeness: { statements: ok, streams: heads.size, proven: clean && unchecked === 0 && p.missing.size === 0 && legacyMax === null && ok === p.statements.length, not_provable_before: legacyMax === null ? null : legacyMax + 1 }, backedNotRecorded };
}
