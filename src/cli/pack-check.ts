/**
 * What `aer1 verify-pack` checks in an evidence pack (`aer1-evidence-pack/1`,
 * src/core/pack/format.ts, docs/evidence-pack.md), offline:
 *
 * - `manifest`: every member's SHA-256 against its manifest chunk, every
 *   chunk against the final manifest, unique names, nothing after the end;
 *   a member a chunk lists that the pack lacks is `member_missing`, said
 *   first and once, and the comparison resynchronises after it (the members
 *   after a gap are compared with their own entries); what depends on the
 *   missing member (its records' events, a stream's gap, a recomputed report,
 *   the timeline chain) is listed as not checked, not blamed on others;
 * - `checkpoint_signature`, `cosignatures` (with witnesses), `timestamp`
 *   (RFC 3161, with a TSA chain) on the `log/checkpoint` note;
 * - for every `event/<position>`: the leaf hash computed from the leaf bytes
 *   (`leaf_hash`), the inclusion proof against the checkpoint's root
 *   (`inclusion`), the leaf is the canonical ledger event at that position (`leaf_event`);
 * - for every record (receipt, entry, commitment, workflow, plan, report, outcome):
 *   its name is the one the format gives it and no id/seq is held twice
 *   (`member_name`, `duplicate`), its event is in the pack and carries exactly
 *   the record's bytes (`leaf_bytes`); a record without its bytes is withheld
 *   (the pack is then not verified);
 * - the subject (`subject`): every event and record on the subject's streams,
 *   every named receipt held (see {@link bindSubject}); a `receipt/<id>`
 *   member stating the receipt is not recorded is the server's word, which
 *   cannot be checked offline: listed, never a pass, and the pack is then
 *   not verified (issue 26);
 * - AER-1 verdicts with the core (`aer1_verdict`): every receipt, the
 *   timeline chain with every commitment, the workflow, every outcome report;
 * - every coverage report recomputed with the core's `reconcile` from the
 *   pack's plan, records and outcome reports as of its position
 *   (`report_recomputed`: same digest).
 *
 * Every failure names its member and check; all are collected, none stops
 * the others, but one: a checkpoint that does not verify under --vkey (the
 * wrong key given, issue 27) is the one failure, and checking stops there,
 * since every inclusion and report judges against it.
 */
import { createReadStream } from 'node:fs';
import { has, isObject, ReceiptResult, verifyReceipt, verifyWorkflow } from '../core/aer1';
import { canonicalDigest, canonicalJson } from '../core/coverage/canonical';
import { timelineIntegrity } from '../core/coverage/integrity';
import { CoverageReportContent, reconcile, RecordInput, Recorders, reportDigest } from '../core/coverage/reconcile';
import { outcomeInputs, OutcomeSource, planInForce, planMeta } from '../core/coverage/report-inputs';
import { outcomeNamesSubject } from '../core/coverage/outcomes';
import { coverageHeadline } from '../core/coverage/headline';
import type { PlanSubject } from '../core/coverage/plan';
import { verifyOutcome } from '../core/outcomes/outcome';
import { MANIFEST_CHUNK, memberHash, memberName, PACK_FORMAT } from '../core/pack/format';
import { Checkpoint, isTlogError, leafHash, verifyCheckpoint, verifyInclusion } from '../core/tlog';
import type * as Rfc3161 from '../core/timestamp';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const rfc3161 = (): Promise<typeof Rfc3161> => import('../core/timestamp');
import { LeafEvent, parseLeaf } from '../core/ledger/leaf';
import { quorumCheck, TrustPolicy } from '../core/tlog/quorum';
import { Attestation, CommitmentTrust, judgeAttestation, StoredAttestation } from '../core/aer1/attestation';
import { parseJsonBytes } from './input';

/** One failed check: which member, which check, why. */
export interface PackFailure {
  member: string;
  check: string;
  detail: string;
}

/** The outcome of checking a pack. */
export interface PackReport {
  verified: boolean;
  /** false: not a pack at all (exit 2). */
  is_pack: boolean;
  subject: { kind: string; id: string } | null;
  checkpoint: { origin: string; size: number; root: string } | null;
  cosignatures: { name: string; timestamp: number }[];
  timestamp: { gen_time: string; tsa: string } | 'not_checked' | null;
  /**
   * `withheld`: events whose leaf is withheld; `withheld_records`: records
   * whose bytes are withheld; `not_recorded`: `receipt/<id>` members stating
   * that a receipt the subject names is not recorded (the server's word, not
   * provable offline). Any of them makes the pack NOT VERIFIED.
   */
  counts: { members: number; events: number; receipts: number; entries: number; commitments: number; workflows: number; plans: number; reports: number; outcomes: number; withheld: number; withheld_records: number; not_recorded: number };
  /** Passed checks by name, counted. */
  passed: Record<string, number>;
  /** `outcomes`: verdicts of the outcome reports (issue 18), counted like the receipts'. */
  verdicts: { receipts: Record<string, number>; timeline: string | null; workflow: string | null; outcomes: Record<string, number> };
  reports: { report_id: string; digest: string; recomputed: string | null }[];
  /**
   * What the subject's coverage report concludes (the pack's subject report,
   * or the newest report in the pack by ledger position), as the report
   * states it: its `result` and the shared headline
   * (src/core/coverage/headline.ts). A verified pack with `result: findings`
   * is authentic evidence of findings, never of full coverage. Null: no report.
   */
  subject_result: { report_id: string; position: number; result: string; headline: string | null } | null;
  failures: PackFailure[];
  /** What was not checked (withheld bytes, a token without --tsa-certs). */
  not_checked: string[];
}

type Obj = Record<string, unknown>;

const b64 = (s: unknown): Buffer | null => (typeof s === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? Buffer.from(s, 'base64') : null);

/** NDJSON texts of an import, as the ledger splits them (src/common/raw-json.ts `ndjsonTexts`). */
function ndjsonTexts(text: string): string[] {
  const out: string[] = [];
  for (let line of text.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (/^[ \t\r]*$/.test(line)) continue;
    out.push(line);
  }
  return out;
}

function parse(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** Lines of a file as Buffers (split on LF only), streamed. */
async function* fileLines(file: string): AsyncGenerator<Buffer> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file)) {
    let buf = rest.length ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let at: number;
    while ((at = buf.indexOf(0x0a)) >= 0) {
      yield buf.subarray(0, at);
      buf = buf.subarray(at + 1);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length) yield rest;
}

interface RecordRef {
  member: string;
  position: number;
}

/** Check the pack in `file` against `policy` (see the module comment). Throws only when the file cannot be read. */
export async function checkPack(file: string, policy: TrustPolicy): Promise<PackReport> {
  const failures: PackFailure[] = [];
  const passed: Record<string, number> = {};
  const notChecked: string[] = [];
  const fail = (member: string, check: string, detail: string): void => void failures.push({ member, check, detail });
  const pass = (check: string): void => void (passed[check] = (passed[check] ?? 0) + 1);
  const counts = { members: 0, events: 0, receipts: 0, entries: 0, commitments: 0, workflows: 0, plans: 0, reports: 0, outcomes: 0, withheld: 0, withheld_records: 0, not_recorded: 0 };

  let header: Obj | null = null;
  let isPack = false;
  let cp: Checkpoint | null = null;
  let cpNote: string | null = null;
  /** The `log/vkey` member's key (the server's statement), when it is not --vkey. */
  let otherVkey: string | null = null;
  /** Set when the checkpoint does not verify under --vkey: every later check depends on it, so checking stops there. */
  let stopped: string | null = null;
  let cosigs: { name: string; timestamp: number }[] = [];
  let timestamp: PackReport['timestamp'] = null;
  const events = new Map<number, LeafEvent | null>();
  // Every record member is kept and checked (a list, never a map a later member could overwrite).
  const receipts: (RecordRef & { id: string; raw: string | null })[] = [];
  const entries: (RecordRef & { seq: number; raw: string | null })[] = [];
  const commitments: (RecordRef & { id: string; raw: string | null })[] = [];
  const workflows: (RecordRef & { id: string; raw: string | null })[] = [];
  /** `receipt/<id>` members stating that a named receipt is not in the ledger (`recorded: false`). */
  const notRecorded: (RecordRef & { id: string })[] = [];
  const plans: (RecordRef & { plan_id: string; version: number; digest: string; registered_at: string; plan: string; withheld: boolean })[] = [];
  const reports: (RecordRef & { report_id: string; digest: string; report: unknown; recorders: unknown; other_jobs: unknown })[] = [];
  const outcomes: (RecordRef & { id: string; receipt_id: string; raw: string | null })[] = [];

  /** A record member's name must be exactly the one the format gives it (src/core/pack/format.ts `memberName`). */
  const named = (name: string, expected: string | null, form: string): void => {
    if (expected === name) pass('member_name');
    else fail(name, 'member_name', expected === null ? `its fields do not make a name of the form ${form}` : `the record it holds is named ${expected} by the format: a member under another name is refused`);
  };
  /** A record's bytes: null (withheld, counted and listed) when the pack does not carry them. */
  const rawOf = (name: string, raw: unknown): string | null => {
    if (typeof raw === 'string') return raw;
    counts.withheld_records++;
    notChecked.push(`${name}: bytes withheld`);
    return null;
  };

  // Manifest state.
  /** Members a manifest chunk lists that the pack lacks (`member_missing`): each the one failure of its absence. */
  const missing = new Set<string>();
  const names = new Set<string>();
  let pending: [string, string][] = [];
  const chunkHashes: [string, string][] = [];
  let trailer: Obj | null = null;
  let lineNo = 0;

  for await (const line of fileLines(file)) {
    lineNo++;
    if (line.length === 0) {
      fail(`line ${lineNo}`, 'format', 'an empty line (a pack has one member on every line)');
      continue;
    }
    const parsed = parseJsonBytes(line);
    const m = parsed.ok && isObject(parsed.value) ? (parsed.value as Obj) : null;
    const name = m && typeof m.member === 'string' ? m.member : null;
    if (m === null || name === null) {
      fail(`line ${lineNo}`, 'format', parsed.ok ? 'not a member object {"member": ...}' : `not JSON (${parsed.detail}): the line was altered`);
      if (!trailer) pending.push([`line ${lineNo}`, memberHash(line)]);
      continue;
    }
    isPack ||= name === 'header' || name === 'manifest' || name.startsWith('event/');
    if (trailer) {
      fail(name, 'manifest', `line ${lineNo} comes after the final manifest`);
      continue;
    }
    if (name === 'manifest') {
      trailer = m;
      continue;
    }
    if (name.startsWith('manifest/')) {
      const expectName = memberName.chunk(chunkHashes.length);
      if (name !== expectName) fail(name, 'manifest', `expected chunk ${expectName} here`);
      chunkHashes.push([name, memberHash(line)]);
      const listed = Array.isArray(m.members) ? (m.members as unknown[]) : [];
      const gaps = compareChunk(name, listed, pending, fail, pass, missing);
      if (!gaps && listed.length !== MANIFEST_CHUNK && listed.length !== pending.length) fail(name, 'manifest', `lists ${listed.length} members`);
      pending = [];
      continue;
    }
    counts.members++;
    if (names.has(name)) fail(name, 'format', 'this member name appears twice');
    names.add(name);
    pending.push([name, memberHash(line)]);
    if (lineNo === 1 && name !== 'header') fail(name, 'format', 'the first line is not the header');

    if (name === 'header') {
      header = m;
      if (m.format !== PACK_FORMAT) fail(name, 'format', `format is ${JSON.stringify(m.format)}, not ${PACK_FORMAT}`);
    } else if (name === 'log/vkey') {
      if (m.vkey !== policy.log.vkey) {
        otherVkey = typeof m.vkey === 'string' ? m.vkey : JSON.stringify(m.vkey);
        fail(name, 'vkey', `the pack names the log key ${JSON.stringify(m.vkey)}, not --vkey ${policy.log.vkey} (only --vkey is trusted)`);
      } else pass('vkey');
    } else if (name === 'log/checkpoint') {
      cpNote = typeof m.note === 'string' ? m.note : '';
      try {
        cp = verifyCheckpoint(cpNote, [policy.log], policy.log.name).checkpoint;
        if (m.size !== cp.size) fail(name, 'checkpoint_signature', `size ${String(m.size)} is not the signed note's ${cp.size}`);
        pass('checkpoint_signature');
      } catch (e) {
        // Issue 27: nothing else can be checked against a checkpoint --vkey does not sign (every inclusion, and the
        // reports, judge against it): say that one thing and stop, rather than list what depends on it as failures.
        const why = isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message;
        stopped =
          otherVkey !== null
            ? `the checkpoint does not verify under --vkey ${policy.log.vkey} (${why}): the pack names the log key ${otherVkey}. Wrong key given, or a pack of another log: check the key with the operator (GET /.well-known/aer1 gives log_vkey)`
            : `the checkpoint does not verify under --vkey ${policy.log.vkey} (${why}): the signed note was altered, or the pack is of another log`;
        break;
      }
      if (policy.witnesses.length > 0) {
        const q = quorumCheck(cpNote, policy);
        if (q.check.ok) pass('cosignatures');
        else fail(name, 'cosignatures', q.check.detail);
        cosigs = q.valid.map((c) => ({ name: c.name, timestamp: c.timestamp }));
      }
    } else if (name === 'log/timestamp') {
      const der = b64(m.timestamp);
      if (policy.tsaCertsPem === undefined) {
        timestamp = 'not_checked';
        notChecked.push('the RFC 3161 token of the checkpoint: give --tsa-certs PEM (the TSA chain) to check it');
      } else if (!der || cpNote === null) fail(name, 'timestamp', der ? 'the timestamp comes before the checkpoint' : 'not base64');
      else {
        const { checkpointTimestampDigest, verifyTimeStampResponse } = await rfc3161();
        let digest: Buffer | null = null;
        try {
          digest = checkpointTimestampDigest(cpNote);
        } catch {
          digest = null;
        }
        const r = digest === null ? null : await verifyTimeStampResponse(der, digest, { certsPem: policy.tsaCertsPem });
        if (r === null) fail(name, 'timestamp', 'the checkpoint has no body to timestamp');
        else if (r.ok) {
          timestamp = { gen_time: r.genTime, tsa: r.tsaName };
          pass('timestamp');
        } else fail(name, 'timestamp', `${r.code}: ${r.message}`);
      }
    } else if (name.startsWith('event/')) {
      counts.events++;
      const position = m.position;
      if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1 || name !== memberName.event(position) || m.leaf_index !== position - 1) {
        fail(name, 'format', 'position and leaf_index do not match the member name');
        continue;
      }
      const stated = b64(m.leaf_hash);
      const proof = Array.isArray(m.proof) ? m.proof.map(b64) : [null];
      if (m.leaf === null) {
        counts.withheld++;
        events.set(position, null);
        notChecked.push(`${name}: leaf bytes withheld (${typeof m.withheld === 'string' ? m.withheld : 'no reason given'}); its inclusion is checked from the stated leaf hash only`);
      }
      const leaf = m.leaf === null ? null : b64(m.leaf);
      if (m.leaf !== null && leaf === null) {
        fail(name, 'leaf_hash', 'leaf is not base64');
        continue;
      }
      const computed = leaf ? leafHash(leaf) : stated;
      if (leaf && (!stated || !stated.equals(computed as Buffer))) fail(name, 'leaf_hash', `SHA-256(0x00 || leaf) is ${(computed as Buffer).toString('base64')}, the member states ${String(m.leaf_hash)}`);
      else if (leaf) pass('leaf_hash');
      if (cp === null) fail(name, 'inclusion', 'not checked: no checkpoint signed by --vkey precedes it');
      else if (!computed || proof.some((p) => p === null)) fail(name, 'inclusion', 'the proof or leaf hash is not base64');
      else {
        try {
          verifyInclusion(position - 1, cp.size, computed, proof as Buffer[], cp.rootHash);
          pass('inclusion');
        } catch (e) {
          fail(name, 'inclusion', isTlogError(e) ? `${e.code}: ${e.message}` : (e as Error).message);
        }
      }
      if (leaf) {
        try {
          const ev = parseLeaf(leaf);
          if (ev.position !== position) fail(name, 'leaf_event', `the leaf holds the event at position ${ev.position}, not ${position}`);
          else if (ev.type !== m.type) fail(name, 'leaf_event', `the leaf holds a ${ev.type} event; the member says ${String(m.type)}`);
          else pass('leaf_event');
          events.set(position, ev);
        } catch (e) {
          fail(name, 'leaf_event', (e as Error).message);
        }
      }
    } else if (name.startsWith('receipt/')) {
      counts.receipts++;
      const id = typeof m.id === 'string' ? m.id : '';
      named(name, id !== '' && id === id.toLowerCase() ? memberName.receipt(id) : null, 'receipt/<id> with its lowercase id');
      if (m.recorded === false && m.position === null && m.raw === null) {
        // The server's statement, not a record: nothing here can be checked, so it is listed and the pack is not verified
        // (a recorded receipt swapped for this statement, its event dropped, reads the same offline).
        notRecorded.push({ member: name, position: NaN, id });
        counts.not_recorded++;
        notChecked.push(`${name}: the ledger states that this receipt, named by the subject, is not recorded as of the checkpoint; that cannot be checked offline`);
        continue;
      }
      receipts.push({ member: name, position: Number(m.position), id, raw: rawOf(name, m.raw) });
    } else if (name.startsWith('entry/')) {
      counts.entries++;
      const seq = typeof m.seq === 'number' && Number.isSafeInteger(m.seq) && m.seq >= 1 ? m.seq : null;
      named(name, seq === null ? null : memberName.entry(seq), 'entry/<seq> with a seq from 1');
      entries.push({ member: name, position: Number(m.position), seq: seq ?? NaN, raw: rawOf(name, m.raw) });
    } else if (name.startsWith('commitment/')) {
      counts.commitments++;
      const id = typeof m.id === 'string' ? m.id : '';
      named(name, id ? memberName.commitment(id) : null, 'commitment/<id>');
      commitments.push({ member: name, position: Number(m.position), id, raw: rawOf(name, m.raw) });
    } else if (name.startsWith('workflow/')) {
      counts.workflows++;
      const id = typeof m.id === 'string' ? m.id : '';
      named(name, id && typeof m.position === 'number' ? memberName.workflow(id, m.position) : null, 'workflow/<id>/<position>');
      workflows.push({ member: name, position: Number(m.position), id, raw: rawOf(name, m.raw) });
    } else if (name.startsWith('plan/')) {
      counts.plans++;
      named(name, typeof m.plan_id === 'string' && typeof m.version === 'number' ? memberName.plan(m.plan_id, m.version) : null, 'plan/<plan_id>/<version>');
      const plan = rawOf(name, m.plan);
      plans.push({ member: name, position: Number(m.position), plan_id: String(m.plan_id), version: Number(m.version), digest: String(m.digest), registered_at: String(m.registered_at), plan: plan ?? '' , withheld: plan === null });
    } else if (name.startsWith('report/')) {
      counts.reports++;
      named(name, typeof m.report_id === 'string' ? memberName.report(m.report_id) : null, 'report/<report_id>');
      reports.push({ member: name, position: Number(m.position), report_id: String(m.report_id), digest: String(m.digest), report: m.report, recorders: m.recorders, other_jobs: m.other_jobs });
    } else if (name.startsWith('outcome/')) {
      counts.outcomes++;
      const id = typeof m.id === 'string' ? m.id : '';
      named(name, id !== '' && id === id.toLowerCase() ? memberName.outcome(id) : null, 'outcome/<id> with its lowercase id');
      outcomes.push({ member: name, position: Number(m.position), id, receipt_id: typeof m.receipt_id === 'string' ? m.receipt_id : '', raw: rawOf(name, m.raw) });
    } else fail(name, 'format', 'an unknown member');
  }

  if (stopped !== null) {
    // One failure, and what was not checked because of it (never counted as separate failures).
    notChecked.push(`everything after log/checkpoint (manifest, inclusion proofs, records, verdicts, reports): the checkpoint does not verify under --vkey, and every other check depends on it`);
    return {
      verified: false,
      is_pack: isPack,
      subject: header && isObject(header.subject) ? (header.subject as { kind: string; id: string }) : null,
      checkpoint: null,
      cosignatures: [],
      timestamp: null,
      counts,
      passed: {},
      verdicts: { receipts: {}, timeline: null, workflow: null, outcomes: {} },
      reports: [],
      subject_result: null,
      failures: [{ member: 'log/checkpoint', check: 'checkpoint_signature', detail: stopped }],
      not_checked: notChecked,
    };
  }

  // The end of the manifest.
  if (!trailer) fail('manifest', 'manifest', 'the pack has no final manifest: it was cut short (or its last line altered)');
  else {
    if (pending.length) for (const p of pending) fail(p[0], 'manifest', 'no manifest chunk lists this member');
    if (trailer.format !== PACK_FORMAT) fail('manifest', 'format', `format is ${JSON.stringify(trailer.format)}`);
    // A member missing (named above) is listed in the count: the count is checked against what the chunks list.
    if (trailer.member_count !== counts.members + missing.size) fail('manifest', 'manifest', `member_count is ${String(trailer.member_count)}, the pack holds ${counts.members}${missing.size ? ` and ${missing.size} listed member${missing.size === 1 ? ' is' : 's are'} missing` : ''}`);
    const listed = Array.isArray(trailer.chunks) ? (trailer.chunks as unknown[]) : [];
    const n = Math.max(listed.length, chunkHashes.length);
    for (let k = 0; k < n; k++) {
      const l = listed[k];
      const got = chunkHashes[k];
      const lh = Array.isArray(l) ? l[1] : undefined;
      if (!got) fail(Array.isArray(l) ? String(l[0]) : 'manifest', 'manifest', 'the final manifest lists a chunk that is not in the pack');
      else if (!Array.isArray(l) || l[0] !== got[0] || lh !== got[1]) fail(got[0], 'manifest', `SHA-256 of the chunk is ${got[1]}, the final manifest says ${String(lh)}: the chunk or the manifest was altered`);
      else pass('manifest');
    }
  }
  if (!header) fail('header', 'format', 'the pack has no header');
  if (!cpNote) fail('log/checkpoint', 'checkpoint_signature', 'the pack has no checkpoint');

  // Records against their events.
  const parsedData = new Map<number, Obj | null>();
  const leafData = (ref: RecordRef, type: string | string[]): Obj | null => {
    const ev = events.get(ref.position);
    if (ev === undefined) {
      // A listed event the pack lacks is named once (member_missing), not again on the records it backs.
      if (missing.has(memberName.event(ref.position))) notChecked.push(`${ref.member}: against its event (position ${ref.position}), which is missing from the pack`);
      else fail(ref.member, 'leaf_bytes', `its event (position ${ref.position}) is not in the pack`);
      return null;
    }
    if (ev === null) return null; // withheld: said above
    const types = Array.isArray(type) ? type : [type];
    if (!types.includes(ev.type)) {
      fail(ref.member, 'leaf_bytes', `the event at position ${ref.position} is a ${ev.type}, not ${types.join(' or ')}`);
      return null;
    }
    // Parsed once per event: an import's one event backs every entry it recorded.
    let d = parsedData.get(ref.position);
    if (d === undefined) {
      const v = parse(ev.data);
      d = isObject(v) ? (v as Obj) : null;
      parsedData.set(ref.position, d);
    }
    return d;
  };
  const same = (ref: RecordRef, ok: boolean, what: string): void => {
    if (ok) pass('leaf_bytes');
    else fail(ref.member, 'leaf_bytes', `${what} differs from the bytes in its event (leaf ${ref.position - 1}): altered`);
  };

  const receiptVerdicts: Record<string, number> = {};
  const receiptDocs = new Map<string, unknown>();
  // One member per id, per seq: a second one (whatever its name) is refused, and both are checked.
  const dupes = <T>(list: T[], key: (x: T) => string | number, member: (x: T) => string, what: string): void => {
    const seen = new Map<string | number, string>();
    for (const x of list) {
      const k = key(x);
      const prev = seen.get(k);
      if (prev !== undefined) fail(member(x), 'duplicate', `${what} ${String(k)} is also held by ${prev}`);
      else seen.set(k, member(x));
    }
  };
  dupes(receipts, (r) => r.id, (r) => r.member, 'receipt');
  dupes(entries, (e) => e.seq, (e) => e.member, 'entry seq');
  dupes(commitments, (c) => c.id, (c) => c.member, 'commitment');
  dupes(reports, (r) => r.report_id, (r) => r.member, 'report');
  dupes(plans, (p) => `${p.plan_id}/${p.version}`, (p) => p.member, 'plan version');
  dupes(workflows, (w) => w.position, (w) => w.member, 'workflow receipt at position');
  dupes(outcomes, (o) => o.id, (o) => o.member, 'outcome');
  for (const r of receipts) {
    const id = r.id;
    const d = leafData(r, 'ReceiptRecorded');
    if (r.raw === null) continue; // withheld: counted and listed when read
    if (d) same(r, d.raw === r.raw && String(d.id).toLowerCase() === id, 'the receipt');
    const p = parseJsonBytes(Buffer.from(r.raw, 'utf8'));
    const result: ReceiptResult = verifyReceipt(p.ok ? p.value : undefined);
    receiptVerdicts[result.verdict] = (receiptVerdicts[result.verdict] ?? 0) + 1;
    if (result.verdict === 'valid') pass('aer1_verdict');
    else fail(r.member, 'aer1_verdict', `AER-1 verdict ${result.verdict} (${result.reasons.join(', ')})`);
    if (p.ok && !receiptDocs.has(id)) receiptDocs.set(id, p.value);
  }

  // Outcome reports (issue 18): each against its event, and verified again (its output commitment).
  const outcomeVerdicts: Record<string, number> = {};
  for (const o of outcomes) {
    const d = leafData(o, 'OutcomeReported');
    if (o.raw === null) continue; // withheld: counted and listed when read
    const p = parseJsonBytes(Buffer.from(o.raw, 'utf8'));
    const result = verifyOutcome(p.ok ? p.value : undefined);
    // The report is recomputed from the event's fields: they must be the ones its raw bytes state.
    const f = result.fields;
    const fieldsSame = f === null || (d !== null && d.job_id === f.job_id && d.receipt_id === f.receipt_id.toLowerCase() && d.effect === f.effect && d.result === f.result && d.observed_at === f.observed_at && d.system === f.system && d.output_hash === f.output_hash);
    if (d) same(o, d.raw === o.raw && String(d.outcome_id).toLowerCase() === o.id && d.receipt_id === o.receipt_id && fieldsSame, 'the outcome report (its bytes, or the fields its event states for them)');
    outcomeVerdicts[result.verdict] = (outcomeVerdicts[result.verdict] ?? 0) + 1;
    if (result.verdict === 'valid') pass('aer1_verdict');
    else fail(o.member, 'aer1_verdict', `the outcome report's verdict is ${result.verdict} (${result.reasons.join(', ')})`);
  }

  // Entries: each against its event (an append, or its line of an import).
  const importTexts = new Map<number, string[] | unknown[] | null>();
  for (const e of entries) {
    const seq = e.seq;
    if (e.raw === null || Number.isNaN(seq)) continue; // withheld (listed when read) or no seq (failed member_name)
    const d = leafData(e, ['TimelineEntryAppended', 'TimelineImported']);
    if (!d) continue;
    if (events.get(e.position)?.type === 'TimelineEntryAppended') same(e, d.raw === e.raw && d.seq === seq, 'the entry');
    else {
      if (!importTexts.has(e.position)) {
        const raw = typeof d.raw === 'string' ? d.raw : '';
        const arr = d.format === 'ndjson' ? ndjsonTexts(raw) : parse(raw);
        importTexts.set(e.position, Array.isArray(arr) ? arr : null);
      }
      const all = importTexts.get(e.position);
      const at = all ? all[seq - 1] : undefined;
      same(e, typeof at === 'string' ? at === e.raw : at !== undefined && JSON.stringify(at) === JSON.stringify(parse(e.raw)), 'the entry');
    }
  }
  for (const c of commitments) {
    const d = leafData(c, 'EndpointCommitmentRecorded');
    if (d && c.raw !== null) same(c, d.raw === c.raw && d.id === c.id, 'the commitment');
  }
  for (const w of workflows) {
    const d = leafData(w, 'WorkflowReceiptRecorded');
    if (d && w.raw !== null) same(w, d.raw === w.raw && d.workflow_id === w.id, 'the workflow receipt');
  }
  for (const p of plans) {
    const d = leafData(p, ['PlanRegistered', 'PlanAmended']);
    if (p.withheld) continue;
    let digestOk = false;
    try {
      digestOk = canonicalDigest(JSON.parse(p.plan)) === p.digest;
    } catch {
      digestOk = false;
    }
    if (!digestOk) fail(p.member, 'plan_digest', `the plan's canonical SHA-256 is not its digest ${p.digest}: altered`);
    else pass('plan_digest');
    if (d) same(p, canonicalJson(d.plan) === p.plan && d.digest === p.digest && d.version === p.version && d.plan_id === p.plan_id && d.registered_at === p.registered_at, 'the plan version');
  }

  // The timeline chain (S7) with every commitment, judged by the core.
  const subject = header && isObject(header.subject) ? (header.subject as { kind: string; id: string }) : null;
  let timelineVerdict: string | null = null;
  if (entries.length > 0) {
    const bySeq = [...entries].sort((a, b) => a.seq - b.seq);
    const seqs = bySeq.map((e) => e.seq);
    const jobId = subject?.kind === 'job' ? subject.id : '';
    const ok = seqs.every((s, k) => s === k + 1);
    const entryMissing = [...missing].some((x) => x.startsWith('entry/') || x.startsWith('commitment/'));
    if (entryMissing) notChecked.push('the timeline chain (S7): an entry or commitment member the manifest lists is missing from the pack');
    else if (!ok) fail('timeline', 'aer1_verdict', `the entries are not seq 1..${seqs.length} (an entry is missing, repeated or renumbered)`);
    if (!entryMissing && bySeq.every((e) => e.raw !== null) && commitments.every((c) => c.raw !== null)) {
      const list = bySeq.map((e) => parse(e.raw));
      const cs = commitments.map((c) => ({ id: c.id, ...commitmentValue(parse(c.raw)), recorded_position: c.position }));
      const integ = timelineIntegrity(jobId, list, cs).integrity;
      timelineVerdict = integ.verdict;
      if (integ.verdict === 'valid') pass('aer1_verdict');
      else fail(`timeline (entry/1..entry/${seqs.length})`, 'aer1_verdict', `the chain's AER-1 verdict is ${String(integ.verdict)} (${integ.reasons.join(', ')})`);
      for (const ci of integ.commitments) {
        if (ci.contradicts) fail(commitments.find((c) => ci.commitment.includes(c.id))?.member ?? `commitment ${ci.commitment}`, 'aer1_verdict', `${ci.outcome}: the commitment contradicts the timeline`);
      }
    }
  }
  let workflowVerdict: string | null = null;
  if (workflows.length > 0) {
    // The workflow in force is the one recorded last in the ledger (highest position), whatever the file order.
    const last = workflows.reduce((a, b) => (b.position > a.position ? b : a));
    if (last.raw !== null) {
      const r = verifyWorkflow(parse(last.raw), receiptDocs.size ? receiptDocs : undefined);
      workflowVerdict = r.verdict;
      if (r.verdict === 'valid') pass('aer1_verdict');
      else fail(last.member, 'aer1_verdict', `the workflow's AER-1 verdict is ${r.verdict} (${r.reasons.join(', ')})`);
    }
  }

  // Coverage reports, recomputed from the pack.
  const reportOut: PackReport['reports'] = [];
  for (const r of reports) {
    const d = leafData(r, 'CoverageReportIssued');
    let content = r.report as CoverageReportContent;
    if (canonicalDigest(content) !== r.digest) fail(r.member, 'report_digest', `the report's canonical SHA-256 is ${canonicalDigest(content)}, not its digest ${r.digest}: altered`);
    else pass('report_digest');
    if (d) same(r, canonicalJson(d.report) === canonicalJson(r.report) && d.digest === r.digest && d.report_id === r.report_id, 'the report');
    let recomputed: string | null = null;
    try {
      content = r.report as CoverageReportContent;
      recomputed = reportDigest(recompute(content, r.recorders, r.other_jobs, { events, plans }, { log_vkey: policy.log.vkey, trusted: policy.commitmentKeys ?? [] }));
      if (recomputed === r.digest) pass('report_recomputed');
      // With a listed member missing the report's inputs are incomplete: the missing member is the failure, the report is not judged.
      else if (missing.size) notChecked.push(`${r.member}: not recomputed: ${[...missing].join(', ')}, missing from the pack, may be among its inputs`);
      else fail(r.member, 'report_recomputed', `reconciling the pack's plan and records as of position ${String(content.as_of_position)} gives digest ${recomputed}, the report says ${r.digest}`);
    } catch (e) {
      if (missing.size) notChecked.push(`${r.member}: not recomputed: ${(e as Error).message} (${[...missing].join(', ')} missing from the pack)`);
      else fail(r.member, 'report_recomputed', `not recomputed: ${(e as Error).message}`);
    }
    reportOut.push({ report_id: r.report_id, digest: r.digest, recomputed });
  }

  bindSubject({ subject, events, receipts, entries, commitments, workflows, plans, reports, outcomes, notRecorded, missing }, fail, pass);
  // A member the manifest lists and the pack lacks is said first (stable otherwise: the order the checks found them).
  failures.sort((a, b) => Number(b.check === 'member_missing') - Number(a.check === 'member_missing'));

  // Verified only when every member was checked: anything withheld or only stated (not recorded) leaves something unchecked.
  const verified = isPack && failures.length === 0 && (passed.checkpoint_signature ?? 0) > 0 && counts.withheld === 0 && counts.withheld_records === 0 && counts.not_recorded === 0;
  return {
    verified,
    is_pack: isPack,
    subject,
    checkpoint: cp ? { origin: cp.origin, size: cp.size, root: cp.rootHash.toString('base64') } : null,
    cosignatures: cosigs,
    timestamp,
    counts,
    passed,
    verdicts: { receipts: receiptVerdicts, timeline: timelineVerdict, workflow: workflowVerdict, outcomes: outcomeVerdicts },
    reports: reportOut,
    subject_result: subjectResult(subject, reports),
    failures,
    not_checked: notChecked,
  };
}

type Fail = (member: string, check: string, detail: string) => void;

/** {@link PackReport.subject_result}: the subject's report (a coverage_report pack), else the newest report held. */
function subjectResult(subject: { kind: string; id: string } | null, reports: (RecordRef & { report_id: string; report: unknown })[]): PackReport['subject_result'] {
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
  return { report_id: own.report_id, position: own.position, result: typeof c.result === 'string' ? c.result : String(c.result), headline };
}

/**
 * One manifest chunk (`name`, listing `listed`) against the members read
 * since the previous chunk (`got`: name, SHA-256), resynchronised after a gap:
 * a listed member the pack lacks is named once (`member_missing`, added to
 * `missing`), a member no entry lists is named as added, and the members
 * after either are compared with their own entries (never blamed for their
 * neighbour's absence). Returns true when a member was missing or added.
 */
function compareChunk(name: string, listed: unknown[], got: [string, string][], fail: Fail, pass: (check: string) => void, missing: Set<string>): boolean {
  const entry = (l: unknown): [string | null, string | null] => [Array.isArray(l) && typeof l[0] === 'string' ? l[0] : null, Array.isArray(l) && typeof l[1] === 'string' ? l[1] : null];
  const listedNames = listed.map((l) => entry(l)[0]);
  const gotNames = new Set(got.map((g) => g[0]));
  const listedSet = new Set(listedNames.filter((x): x is string => x !== null));
  let gaps = false;
  let i = 0;
  let j = 0;
  while (i < listed.length || j < got.length) {
    const [ln, lh] = i < listed.length ? entry(listed[i]) : [null, null];
    const g = j < got.length ? got[j] : null;
    if (g && ln === g[0]) {
      if (lh !== g[1]) fail(g[0], 'manifest', `SHA-256 of the member is ${g[1]}, ${name} says ${lh ?? '(none)'}: the member or the manifest was altered`);
      else pass('manifest');
      i++;
      j++;
    } else if (i < listed.length && (ln === null || !gotNames.has(ln))) {
      gaps = true;
      if (ln === null) fail(name, 'manifest', `entry ${i} is malformed (not [member, sha256])`);
      else if (!missing.has(ln)) {
        missing.add(ln);
        fail(ln, 'member_missing', `listed in the manifest (${name}) but missing from the pack: removed`);
      }
      i++;
    } else if (g && !listedSet.has(g[0])) {
      gaps = true;
      fail(g[0], 'manifest', `${name} does not list this member: it was added`);
      j++;
    } else {
      // Both are listed and held, in another order.
      if (g) fail(g[0], 'manifest', `${name} lists ${ln ?? '(malformed)'} at this place, not ${g[0]}: a member was moved`);
      i++;
      j++;
    }
  }
  return gaps;
}

/**
 * `subject`: the pack is about its header's subject and holds all of it.
 * Every event is on a stream of the subject or of one of its records
 * (`timeline:<job>` or `workflow:<id>`, `receipt:<id>`, `plan:<plan_id>`,
 * `coverage:<report_id>`, `outcome:<id>`), every record's event is on its
 * own stream, the plans and reports are about the subject, every outcome
 * names the subject (its job, or the workflow's id) and answers a receipt the
 * subject's entries or workflow steps name (so no outcome of another call or
 * job can enter a recomputed report), the events of each
 * timeline/workflow/receipt/outcome stream are its positions 1..n with none
 * missing, and every receipt the entries or workflow steps name, or a
 * correction (S9) supersedes to, has a `receipt/<id>` member (recorded:
 * a pass; or stated by the server as not recorded: no pass, listed by the
 * caller). Cutting the end of a stream, or
 * leaving an outcome out, is not detectable offline unless a report in the
 * pack counted it (docs/evidence-pack.md).
 */
function bindSubject(
  p: {
    subject: { kind: string; id: string } | null;
    events: Map<number, LeafEvent | null>;
    receipts: (RecordRef & { id: string; raw: string | null })[];
    entries: (RecordRef & { seq: number; raw: string | null })[];
    commitments: (RecordRef & { id: string })[];
    workflows: (RecordRef & { id: string; raw: string | null })[];
    plans: (RecordRef & { plan_id: string; plan: string })[];
    reports: (RecordRef & { report_id: string; report: unknown })[];
    outcomes: (RecordRef & { id: string })[];
    notRecorded: (RecordRef & { id: string })[];
    /** Members the manifest lists that the pack lacks (each already a `member_missing` failure). */
    missing: Set<string>;
  },
  fail: Fail,
  pass: (check: string) => void,
): void {
  const s = p.subject;
  if (!s || typeof s.id !== 'string' || !['job', 'workflow', 'coverage_report'].includes(s.kind)) {
    fail('header', 'subject', 'the header names no subject {kind: job/workflow/coverage_report, id}');
    return;
  }
  const subjectOf = (report: unknown): { kind: string; id: string } | null => {
    const sub = isObject(report) && isObject(report.subject) ? report.subject : null;
    if (sub && typeof sub.job_id === 'string') return { kind: 'job', id: sub.job_id };
    if (sub && typeof sub.workflow_id === 'string') return { kind: 'workflow', id: sub.workflow_id.toLowerCase() };
    return null;
  };
  let record: { kind: string; id: string } | null;
  if (s.kind === 'coverage_report') {
    const own = p.reports.find((r) => r.report_id === s.id);
    record = own ? subjectOf(own.report) : null;
    if (!own && !p.missing.has(memberName.report(s.id))) fail('header', 'subject', `the pack is about coverage report ${s.id} but holds no report/${s.id}`);
    for (const r of p.reports) if (r.report_id !== s.id) fail(r.member, 'subject', `a report other than ${s.id}, the pack's subject`);
  } else record = { kind: s.kind, id: s.kind === 'workflow' ? s.id.toLowerCase() : s.id };
  if (!record) return;
  const home = record.kind === 'job' ? `timeline:${record.id}` : `workflow:${record.id}`;
  const okSubject = (sub: { kind: string; id: string } | null): boolean => sub !== null && sub.kind === record.kind && sub.id === record.id;

  // Each record's event on the record's own stream.
  const onStream = (ref: RecordRef, stream: string): void => {
    const ev = p.events.get(ref.position);
    if (!ev) return; // missing (leaf_bytes) or withheld (not checked)
    if (ev.stream_id === stream) pass('subject');
    else fail(ref.member, 'subject', `its event (position ${ref.position}) is on stream ${ev.stream_id}, not ${stream}`);
  };
  for (const r of p.receipts) onStream(r, `receipt:${r.id}`);
  for (const e of p.entries) onStream(e, home);
  for (const c of p.commitments) onStream(c, home);
  for (const w of p.workflows) {
    if (record.kind !== 'workflow' || w.id !== record.id) fail(w.member, 'subject', `a workflow receipt of ${w.id}, not of the pack's subject`);
    onStream(w, `workflow:${w.id}`);
  }
  for (const pl of p.plans) {
    onStream(pl, `plan:${pl.plan_id}`);
    const plan = parse(pl.plan);
    const sub = isObject(plan) && isObject(plan.subject) ? (plan.subject as { kind: string; id: string }) : null;
    if (pl.plan !== '' && !okSubject(sub && { kind: sub.kind, id: sub.kind === 'workflow' ? String(sub.id).toLowerCase() : sub.id })) fail(pl.member, 'subject', `a plan for another subject (${JSON.stringify(sub)})`);
  }
  for (const o of p.outcomes) onStream(o, `outcome:${o.id}`);
  for (const r of p.reports) {
    onStream(r, `coverage:${r.report_id}`);
    if (!okSubject(subjectOf(r.report))) fail(r.member, 'subject', `a report on another subject (${JSON.stringify(subjectOf(r.report))})`);
  }

  // The receipts the subject's entries and workflow steps name (what its outcomes may answer), and those a correction supersedes to.
  const named = new Set<string>();
  const lower = (id: unknown): string | null => (typeof id === 'string' ? id.toLowerCase() : null);
  for (const e of p.entries) {
    const doc = parse(e.raw);
    const x = isObject(doc) ? lower(doc.id) : null;
    if (x !== null) named.add(x);
  }
  for (const w of p.workflows) {
    const doc = parse(w.raw);
    if (isObject(doc) && Array.isArray(doc.steps)) for (const st of doc.steps) if (isObject(st) && lower(st.receipt_id) !== null) named.add(lower(st.receipt_id)!);
  }

  // Every event on a stream of the subject or of one of its records: the records held, the receipts its entries name
  // (held or not: a missing receipt member is its own failure, its event is not foreign), and the records of members
  // the manifest lists that the pack lacks.
  const missingStreams = [...p.missing].flatMap((m) => {
    const [kind, id] = [m.slice(0, m.indexOf('/')), m.slice(m.indexOf('/') + 1)];
    if (kind === 'receipt') return [`receipt:${id}`];
    if (kind === 'outcome') return [`outcome:${id}`];
    if (kind === 'report') return [`coverage:${id}`];
    if (kind === 'plan') return [`plan:${id.slice(0, id.lastIndexOf('/'))}`];
    return [];
  });
  const allowed = new Set<string>([home, ...p.receipts.map((r) => `receipt:${r.id}`), ...[...named].map((x) => `receipt:${x}`), ...p.plans.map((x) => `plan:${x.plan_id}`), ...p.reports.map((r) => `coverage:${r.report_id}`), ...p.outcomes.map((o) => `outcome:${o.id}`), ...missingStreams]);
  const byStream = new Map<string, number[]>();
  for (const [position, ev] of p.events) {
    if (!ev) continue;
    if (!allowed.has(ev.stream_id)) fail(memberName.event(position), 'subject', `an event of stream ${ev.stream_id}, which is neither the subject's (${home}) nor one of its records'`);
    if (ev.stream_id === home || ev.stream_id.startsWith('receipt:') || ev.stream_id.startsWith('outcome:')) (byStream.get(ev.stream_id) ?? byStream.set(ev.stream_id, []).get(ev.stream_id)!).push(ev.stream_position);
  }
  const withheldAny = [...p.events.values()].some((e) => e === null);
  // An event member the manifest lists is missing: that is the failure, not the gap it leaves in its stream.
  const eventMissing = [...p.missing].some((m) => m.startsWith('event/'));
  if (!withheldAny && !eventMissing) {
    for (const [stream, list] of byStream) {
      list.sort((a, b) => a - b);
      const gap = list.findIndex((x, k) => x !== k + 1);
      if (gap >= 0) fail(stream, 'subject', `the pack holds events ${list.length > 10 ? `${list.slice(0, 10).join(', ')}, ...` : list.join(', ')} of the stream: event ${gap + 1} of the stream is missing`);
    }
  }

  // Every receipt named (by an entry, a workflow step, a correction) has its member: a recorded one passes; one the
  // server states is not recorded is listed (not_checked) and never counted as a pass.
  const held = new Set(p.receipts.map((r) => r.id));
  const stated = new Set(p.notRecorded.map((r) => r.id));
  const need = (id: unknown, by: string): void => {
    if (typeof id !== 'string') return;
    const x = id.toLowerCase();
    if (held.has(x)) pass('subject');
    else if (stated.has(x) || p.missing.has(memberName.receipt(x))) return; // stated: listed; missing: its own failure
    else fail(memberName.receipt(x), 'subject', `${by} names receipt ${x}, which the pack does not hold (a receipt/<id> member, recorded or stated not recorded)`);
  };
  for (const e of p.entries) {
    const doc = parse(e.raw);
    if (isObject(doc)) need(doc.id, e.member);
  }
  for (const w of p.workflows) {
    const doc = parse(w.raw);
    if (isObject(doc) && Array.isArray(doc.steps)) for (const st of doc.steps) if (isObject(st)) need(st.receipt_id, w.member);
  }
  for (const [position, ev] of p.events) {
    if (!ev || ev.type !== 'ReceiptCorrected') continue;
    const d = parse(ev.data);
    if (isObject(d)) need(d.superseded_by, `${memberName.event(position)} (a correction)`);
  }

  // Every outcome answers a call of the subject: a receipt its entries or workflow steps name (not a correction:
  // the server matches outcomes to those ids only). Withheld entries or workflow receipts name nothing checkable here.
  const namedUnknown = p.entries.some((e) => e.raw === null) || p.workflows.some((w) => w.raw === null) || [...p.missing].some((m) => m.startsWith('entry/') || m.startsWith('workflow/'));
  for (const o of p.outcomes) {
    const ev = p.events.get(o.position);
    const d = ev && ev.type === 'OutcomeReported' ? parse(ev.data) : undefined;
    if (!isObject(d)) continue; // missing or withheld (leaf_bytes, not checked)
    // It names the subject (issue 26): an outcome counts only for the job (or workflow) it names.
    const jobId = typeof d.job_id === 'string' ? d.job_id : '';
    if (!outcomeNamesSubject(jobId, record as PlanSubject)) {
      fail(o.member, 'subject', `an outcome of job ${JSON.stringify(jobId)}, not of the pack's subject ${record.kind} ${record.id}: it counts only for the job it names`);
      continue;
    }
    if (namedUnknown) continue;
    const rid = typeof d.receipt_id === 'string' ? d.receipt_id.toLowerCase() : '';
    if (named.has(rid)) pass('subject');
    else fail(o.member, 'subject', `an outcome of receipt ${rid}, which the subject's entries and workflow steps do not name`);
  }
}

/** A commitment stored in its witness envelope is unwrapped (as the ledger's coverage reader does). */
function commitmentValue(doc: unknown): { value: unknown; envelope?: Record<string, unknown> } {
  if (isObject(doc) && has(doc, 'commitment') && !has(doc, 'job_id')) return { value: doc.commitment, envelope: doc as Record<string, unknown> };
  return { value: doc };
}

/**
 * The report's inputs rebuilt from the pack's events at or below its
 * `as_of_position`, as src/coverage/ledger-reader.ts reads them from the
 * database (the plan in force and the outcome reports with the same core
 * helpers as src/coverage/coverage.service.ts: src/core/coverage/report-inputs.ts),
 * then `reconcile` (the core's).
 */
function recompute(
  stored: CoverageReportContent,
  recordersIn: unknown,
  otherJobsIn: unknown,
  pack: { events: Map<number, LeafEvent | null>; plans: { position: number; plan_id: string; version: number; digest: string; registered_at: string; plan: string }[] },
  trust: CommitmentTrust,
): CoverageReportContent {
  const asOf = stored.as_of_position;
  if (typeof asOf !== 'number') throw new Error('the report has no as_of_position');
  const subj = stored.subject as { job_id?: string; workflow_id?: string };
  const kind = subj.job_id !== undefined ? 'job' : 'workflow';
  const id = (subj.job_id ?? subj.workflow_id) as string;
  const evs = [...pack.events.entries()].filter(([p]) => p <= asOf).sort((a, b) => a[0] - b[0]);
  if (evs.some(([, e]) => e === null)) throw new Error('an event it reads is withheld from this pack');
  const list = evs.map(([, e]) => e as LeafEvent);
  const inForce = planInForce(pack.plans, asOf);
  if (inForce === null) throw new Error('no plan version at or below its position is in the pack');
  const { usable, plan } = inForce;
  const data = (e: LeafEvent): Obj => (parse(e.data) ?? {}) as Obj;

  let record: RecordInput;
  let first: number | null;
  let receiptIds: string[];
  if (kind === 'job') {
    const stream = `timeline:${id}`;
    let entries: unknown[] | null = null;
    const commitments: { id: string | null; value: unknown; envelope?: Record<string, unknown>; recorded_position: number; attestation: Attestation }[] = [];
    let firstT: number | null = null;
    for (const e of list.filter((x) => x.stream_id === stream)) {
      firstT ??= e.position;
      const d = data(e);
      if (e.type === 'TimelineEntryAppended') (entries ??= []).push(parse(d.raw));
      else if (e.type === 'TimelineImported') {
        if (d.format === 'ndjson') entries = ndjsonTexts(String(d.raw)).map((t) => parse(t));
        else {
          const all = parse(d.raw);
          entries = Array.isArray(all) ? all : [all];
        }
      } else if (e.type === 'EndpointCommitmentRecorded') {
        // Who stands behind it, judged as the server judges it (issue 15): the ledger's own under the pack's log key, an attested one under --trusted-key.
        const attestation = judgeAttestation(String(d.raw), (d.attestation ?? null) as StoredAttestation | null, trust, e.key_name);
        commitments.push({ id: typeof d.id === 'string' ? d.id : null, ...commitmentValue(parse(d.raw)), recorded_position: e.position, attestation });
      }
    }
    record = { kind: 'timeline', entries, commitments };
    const ids = new Set<string>();
    for (const x of entries ?? []) if (isObject(x) && typeof x.id === 'string') ids.add(x.id.toLowerCase());
    receiptIds = [...ids];
    const firstR = firstOf(list, receiptIds);
    first = firstT === null ? firstR : firstR === null ? firstT : Math.min(firstT, firstR);
  } else {
    const wf = list.filter((x) => x.stream_id === `workflow:${id}` && x.type === 'WorkflowReceiptRecorded');
    const workflow = wf.length ? (parse(data(wf[wf.length - 1]).raw) ?? null) : null;
    record = { kind: 'workflow', workflow };
    receiptIds = [];
    if (isObject(workflow) && Array.isArray(workflow.steps)) for (const s of workflow.steps) if (isObject(s) && typeof s.receipt_id === 'string') receiptIds.push(s.receipt_id.toLowerCase());
    const firstR = firstOf(list, receiptIds);
    first = wf.length === 0 ? null : firstR === null ? wf[0].position : Math.min(wf[0].position, firstR);
  }
  // Corrections (S9), followed as the ledger does.
  const next = new Map<string, string>();
  for (const e of list) {
    if (e.type !== 'ReceiptCorrected' || !e.stream_id.startsWith('receipt:')) continue;
    const by = data(e).superseded_by;
    if (typeof by === 'string') next.set(e.stream_id.slice('receipt:'.length), by.toLowerCase());
  }
  const corrections = new Map<string, string[]>();
  for (const rid of new Set(receiptIds)) {
    const chain: string[] = [];
    const visited = new Set([rid]);
    for (let at = next.get(rid); at !== undefined && !visited.has(at); at = next.get(at)) {
      chain.push(at);
      visited.add(at);
    }
    if (chain.length) corrections.set(rid, chain);
  }
  const receipts = new Map<string, unknown>();
  for (const e of list) {
    if (e.type !== 'ReceiptRecorded' || !e.stream_id.startsWith('receipt:')) continue;
    const doc = parse(data(e).raw);
    if (doc !== undefined) receipts.set(e.stream_id.slice('receipt:'.length), doc);
  }
  const rin = isObject(recordersIn) ? (recordersIn as { record?: unknown; receipts?: unknown }) : {};
  const recorders = {
    record: (rin.record ?? null) as Recorders | null,
    receipts: new Map(Object.entries(isObject(rin.receipts) ? (rin.receipts as Record<string, Recorders>) : {})),
  };
  // Outcome reports (issue 18): the data of the pack's OutcomeReported events (each verified when recorded, bound to the subject by bindSubject).
  const found: OutcomeSource[] = [];
  for (const e of list) {
    if (e.type !== 'OutcomeReported' || !e.stream_id.startsWith('outcome:')) continue;
    const d = data(e);
    const text = (k: string): string => (typeof d[k] === 'string' ? (d[k] as string) : '');
    found.push({ position: e.position, outcome_id: text('outcome_id'), job_id: text('job_id'), receipt_id: text('receipt_id'), effect: text('effect'), result: text('result'), observed_at: text('observed_at'), system: text('system'), output_hash: text('output_hash') });
  }
  return reconcile({
    plan,
    plan_meta: planMeta(usable, first),
    record,
    receipts,
    corrections,
    recorders,
    outcomes: outcomeInputs(found, receiptIds, asOf, { kind, id: kind === 'workflow' ? id.toLowerCase() : id }),
    ...(kind === 'job' ? { other_jobs: otherJobs(otherJobsIn) } : {}),
    as_of_position: asOf,
  });
}

/**
 * A job report member's `other_jobs` (the server's statement: receipt id ->
 * the other jobs whose entries name it as of the report, issue 26) as the
 * reconciliation's input; absent (a pack written before it) is no other job.
 * A malformed value is refused (the report is then not recomputed).
 */
function otherJobs(v: unknown): Map<string, string[]> {
  if (v === undefined || v === null) return new Map();
  if (!isObject(v)) throw new Error('its other_jobs is not an object {receipt_id: [job_id, ...]}');
  const out = new Map<string, string[]>();
  for (const [k, jobs] of Object.entries(v)) {
    if (!Array.isArray(jobs) || !jobs.every((j) => typeof j === 'string')) throw new Error(`its other_jobs of ${JSON.stringify(k)} is not a list of job ids`);
    out.set(k, jobs as string[]);
  }
  return out;
}

function firstOf(list: LeafEvent[], receiptIds: string[]): number | null {
  const streams = new Set(receiptIds.map((x) => `receipt:${x}`));
  for (const e of list) if (streams.has(e.stream_id)) return e.position;
  return null;
}
