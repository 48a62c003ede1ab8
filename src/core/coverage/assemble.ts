/**
 * The one assembler of a coverage report's input (issue 28): from the ordered
 * events of a subject (a job or a workflow) as of a ledger position, the
 * complete {@link ReconcileInput}. The server (src/coverage/ledger-reader.ts
 * fetches the events, src/coverage/coverage.service.ts calls this) and
 * `aer1 verify-pack` (src/core/pack, from a pack's proven leaves) build a
 * report's input here and nowhere else, so the report digest is the same by
 * construction. `aer1 coverage` (files, no ledger) shares
 * {@link commitmentOf}, {@link ndjsonTexts} and the input's shape.
 *
 * Pure: no database, no file.
 */
import { has, isObject } from '../aer1';
import { Attestation, CommitmentTrust, judgeAttestation, StoredAttestation } from '../aer1/attestation';
import { ndjsonTexts } from '../json/text';
import { canonicalJson } from './canonical';
import type { PlanSubject } from './plan';
import { outcomeInputs, OutcomeSource, planInForce, planMeta, PlanVersionInput } from './report-inputs';
import type { ErasedEvidence, ErasedReceipt, ErasureNote, ReconcileInput, RecordInput, Recorders } from './types';

export { ndjsonTexts };

/**
 * One ledger event as the assembler reads it: a stored row, or a pack's
 * leaf (src/core/ledger, `parseLeaf`). `data` is the event data's JSON text
 * exactly as hashed; `key_name` names the key that wrote it (null for an
 * event written before attribution).
 */
export interface LedgerEvent {
  position: number;
  stream_id: string;
  type: string;
  key_name: string | null;
  data: string;
  /**
   * Set when the event's payload was erased (issue 29): `data` is then the
   * data the `PayloadsErased` event retained (no content), and this the
   * erasure (null when the erasure is not known to the reader).
   */
  erased?: ErasureNote | null;
}

/** Who recorded the subject's stream and each receipt (the server's word: keys and their owners are not in the events). */
export interface ReportRecorders {
  record: Recorders | null;
  /** Keyed by lowercase receipt id. */
  receipts: ReadonlyMap<string, Recorders>;
}

/** What the assembler needs besides the events. */
export interface AssemblyContext {
  subject: PlanSubject;
  /** The report's ledger position: events above it are ignored. */
  asOf: number;
  /** Keys whose signed commitment notes are ledger-issued or attested (issue 15). */
  trust: CommitmentTrust;
  recorders: ReportRecorders;
  /** Jobs only: receipt id -> the other jobs whose entries name it as of `asOf` (issue 26). */
  otherJobs?: ReadonlyMap<string, readonly string[]>;
}

/** The assembler's answer: the input, or `no_plan` (no version of the subject's plan at or below `asOf` among the events). */
/** `plan_erased`: the plan version in force was erased (issue 29), `position` its event's; nothing can be reconciled against it. */
export type Assembly = { ok: true; input: ReconcileInput; receipt_ids: string[] } | { ok: false; code: 'no_plan' } | { ok: false; code: 'plan_erased'; position: number };

type Obj = Record<string, unknown>;

function parse(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

const dataOf = (e: LedgerEvent): Obj => {
  const d = parse(e.data);
  return isObject(d) ? (d as Obj) : {};
};

/** A commitment stored in its witness envelope (`{commitment, witness, ...}`) unwrapped to the commitment, with the envelope. */
export function commitmentOf(doc: unknown): { value: unknown; envelope?: Record<string, unknown> } {
  if (isObject(doc) && has(doc, 'commitment') && !has(doc, 'job_id')) return { value: doc.commitment, envelope: doc as Record<string, unknown> };
  return { value: doc };
}

/** The subject's own stream: `timeline:<job_id>` or `workflow:<id>` (lowercase). */
export function subjectStream(subject: PlanSubject): string {
  return subject.kind === 'job' ? `timeline:${subject.id}` : `workflow:${subject.id.toLowerCase()}`;
}

/** A job's entries (parsed, in order; null when none is recorded) and its endpoint commitments, from its timeline stream's events. */
function timelineOf(events: readonly LedgerEvent[], stream: string, trust: CommitmentTrust, erased?: ErasedAcc): Extract<RecordInput, { kind: 'timeline' }> {
  let entries: unknown[] | null = null;
  const commitments: { id: string | null; value: unknown; envelope?: Record<string, unknown>; recorded_position: number; attestation: Attestation }[] = [];
  for (const e of events) {
    if (e.stream_id !== stream) continue;
    const d = dataOf(e);
    if (e.erased !== undefined) {
      // Erased (issue 29): the entries' public fields stand in for them; a commitment is left out of the judgement.
      if (e.type === 'TimelineEntryAppended') (entries ??= []).push(erasedEntry(d, e.erased, erased));
      else if (e.type === 'TimelineImported') {
        entries = (Array.isArray(d.entries) ? d.entries : []).map((x: unknown) => erasedEntry(isObject(x) ? x : {}, e.erased ?? null, erased));
        if (erased) erased.timeline_recorded_verdict = typeof d.verdict === 'string' ? d.verdict : null;
      } else if (e.type === 'EndpointCommitmentRecorded') erased?.commitments.push({ id: typeof d.id === 'string' ? d.id : null, position: e.position, erasure: e.erased });
      continue;
    }
    if (e.type === 'TimelineEntryAppended') (entries ??= []).push(parse(d.raw));
    else if (e.type === 'TimelineImported') {
      if (d.format === 'ndjson') entries = ndjsonTexts(String(d.raw)).map((t) => parse(t));
      else {
        const all = parse(d.raw);
        entries = Array.isArray(all) ? all : [all];
      }
    } else if (e.type === 'EndpointCommitmentRecorded') {
      // Who stands behind it, judged now (issue 15): ledger-issued under the log key, attested under a trusted key.
      const attestation = judgeAttestation(String(d.raw), (d.attestation ?? null) as StoredAttestation | null, trust, e.key_name);
      commitments.push({ id: typeof d.id === 'string' ? d.id : null, ...commitmentOf(parse(d.raw)), recorded_position: e.position, attestation });
    }
  }
  return { kind: 'timeline', entries, commitments };
}

/** What the assembler collects of erased evidence (issue 29). */
interface ErasedAcc {
  receipts: Map<string, ErasedReceipt>;
  entries: Map<number, ErasureNote | null>;
  timeline_recorded_verdict?: string | null;
  commitments: { id: string | null; position: number; erasure: ErasureNote | null }[];
  outcomes: Map<string, ErasureNote | null>;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** The stand-in of an erased entry: its retained public fields (`seq`, receipt `id`, `tool`, `provenance_class`, `close`), no content. */
function erasedEntry(d: Obj, erasure: ErasureNote | null, acc?: ErasedAcc): Obj {
  const seq = typeof d.seq === 'number' && Number.isSafeInteger(d.seq) ? d.seq : null;
  if (seq !== null) acc?.entries.set(seq, erasure);
  return { ...(seq !== null ? { seq } : {}), id: str(d.receipt_id), tool: str(d.tool), provenance_class: str(d.provenance_class), ...(d.close === true ? { close: true } : {}) };
}

/** The latest workflow receipt of the workflow stream, and the position of its first one (null when none). */
function workflowOf(events: readonly LedgerEvent[], stream: string): { workflow: unknown; first: number | null } {
  const wf = events.filter((x) => x.stream_id === stream && x.type === 'WorkflowReceiptRecorded');
  return { workflow: wf.length ? (parse(dataOf(wf[wf.length - 1]).raw) ?? null) : null, first: wf.length ? wf[0].position : null };
}

/**
 * The receipt ids the subject's record names, lowercase, in order: a job's
 * entries' `id` members without repeats, a workflow's steps' `receipt_id`s.
 * The server's reader uses it to know which receipt streams to fetch.
 */
export function namedReceiptIds(record: RecordInput): string[] {
  if (record.kind === 'timeline') {
    const ids = new Set<string>();
    for (const x of record.entries ?? []) if (isObject(x) && typeof x.id === 'string') ids.add(x.id.toLowerCase());
    return [...ids];
  }
  const ids: string[] = [];
  const w = record.workflow;
  if (isObject(w) && Array.isArray(w.steps)) for (const s of w.steps) if (isObject(s) && typeof s.receipt_id === 'string') ids.push(s.receipt_id.toLowerCase());
  return ids;
}

/** The subject's record (its timeline or workflow receipt) from the events, and the receipt ids it names. */
export function subjectRecord(events: readonly LedgerEvent[], subject: PlanSubject, trust: CommitmentTrust, erased?: ErasedAcc): { record: RecordInput; receipt_ids: string[] } {
  const record = subject.kind === 'job' ? timelineOf(events, subjectStream(subject), trust, erased) : { kind: 'workflow' as const, workflow: workflowOf(events, subjectStream(subject)).workflow };
  return { record, receipt_ids: namedReceiptIds(record) };
}

/**
 * The correction chains (S9) of `ids`: for each corrected receipt its
 * corrections in order, following corrections of corrections to the latest
 * (`ReceiptCorrected` events naming `superseded_by`; of a receipt corrected
 * twice the later event counts, as its `superseded_by` in the read model).
 * Receipts not corrected are absent; lowercase ids; a cycle stops the walk.
 */
export function correctionChains(events: readonly LedgerEvent[], ids: Iterable<string>): Map<string, string[]> {
  const next = new Map<string, string>();
  for (const e of events) {
    if (e.type !== 'ReceiptCorrected' || !e.stream_id.startsWith('receipt:')) continue;
    const by = dataOf(e).superseded_by;
    if (typeof by === 'string') next.set(e.stream_id.slice('receipt:'.length), by.toLowerCase());
  }
  const out = new Map<string, string[]>();
  for (const id of new Set([...ids].map((x) => x.toLowerCase()))) {
    const chain: string[] = [];
    const visited = new Set([id]);
    for (let at = next.get(id); at !== undefined && !visited.has(at); at = next.get(at)) {
      chain.push(at);
      visited.add(at);
    }
    if (chain.length > 0) out.set(id, chain);
  }
  return out;
}

/** Position of the first event of any of these receipts' streams; null when none. */
function firstOfReceipts(events: readonly LedgerEvent[], ids: readonly string[]): number | null {
  const wanted = new Set(ids.map((x) => `receipt:${x}`));
  for (const e of events) if (wanted.has(e.stream_id)) return e.position;
  return null;
}

const minOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

/** The subject's plan versions (`PlanRegistered`, `PlanAmended` events naming the subject), each as a `plan_versions` row holds it. */
export function planVersionsOf(events: readonly LedgerEvent[], subject: PlanSubject): PlanVersionInput[] {
  const out: PlanVersionInput[] = [];
  for (const e of events) {
    if ((e.type !== 'PlanRegistered' && e.type !== 'PlanAmended') || !e.stream_id.startsWith('plan:')) continue;
    const d = dataOf(e);
    const s = isObject(d.subject) ? d.subject : null;
    if (!s || s.kind !== subject.kind || s.id !== subject.id) continue;
    // An erased version (issue 29) replays from its retained data: `plan` and `digest` null, kept as '' (the read models' mark).
    const gone = d.plan === null || d.plan === undefined;
    out.push({ plan_id: String(d.plan_id), version: Number(d.version), plan: gone ? '' : canonicalJson(d.plan), digest: gone ? '' : String(d.digest), registered_at: String(d.registered_at), position: e.position });
  }
  return out;
}

/** The outcome reports among the events (`OutcomeReported` data with its position; each verified when it was recorded). */
export function outcomeSourcesOf(events: readonly LedgerEvent[]): OutcomeSource[] {
  const found: OutcomeSource[] = [];
  for (const e of events) {
    if (e.type !== 'OutcomeReported' || !e.stream_id.startsWith('outcome:')) continue;
    const d = dataOf(e);
    const text = (k: string): string => (typeof d[k] === 'string' ? (d[k] as string) : '');
    found.push({ position: e.position, outcome_id: text('outcome_id'), job_id: text('job_id'), receipt_id: text('receipt_id'), effect: text('effect'), result: text('result'), observed_at: text('observed_at'), system: text('system'), output_hash: text('output_hash') });
  }
  return found;
}

/**
 * The complete reconcile input of a report on `ctx.subject` as of
 * `ctx.asOf`, from `events`: the events the subject spans in ledger order
 * (its timeline or workflow stream, the streams of the receipts it names and
 * of their corrections, its plan's streams, the outcome reports answering its
 * receipts); events above `asOf` are ignored. The plan in force is the last
 * version at or below `asOf`; execution began at the first event of the
 * subject's stream (a workflow: its first workflow receipt) or of a receipt
 * it names (docs/coverage.md). Throws SyntaxError only when a plan event's
 * plan is not JSON (never for a recorded event).
 */
export function assembleReportInput(events: readonly LedgerEvent[], ctx: AssemblyContext): Assembly {
  const asOf = ctx.asOf;
  const list = events.filter((e) => e.position <= asOf);
  const subject: PlanSubject = ctx.subject.kind === 'workflow' ? { kind: 'workflow', id: ctx.subject.id.toLowerCase() } : ctx.subject;
  const inForce = planInForce(planVersionsOf(list, subject), asOf);
  if (inForce === null) return { ok: false, code: 'no_plan' };
  if (inForce.plan === null) return { ok: false, code: 'plan_erased', position: inForce.used.position };
  const erased: ErasedAcc = { receipts: new Map(), entries: new Map(), commitments: [], outcomes: new Map() };
  const { record, receipt_ids: receiptIds } = subjectRecord(list, subject, ctx.trust, erased);
  const own = subject.kind === 'job' ? (list.find((e) => e.stream_id === subjectStream(subject))?.position ?? null) : workflowOf(list, subjectStream(subject)).first;
  const first = subject.kind === 'workflow' && own === null ? null : minOf(own, firstOfReceipts(list, receiptIds));
  const corrections = correctionChains(list, receiptIds);
  const wanted = new Set([...receiptIds, ...[...corrections.values()].flat()]);
  const receipts = new Map<string, unknown>();
  for (const e of list) {
    const id = e.stream_id.slice('receipt:'.length);
    if (e.type !== 'ReceiptRecorded' || !e.stream_id.startsWith('receipt:') || !wanted.has(id)) continue;
    if (e.erased !== undefined) {
      const d = dataOf(e);
      erased.receipts.set(id, { tool: str(d.tool), provenance_class: str(d.provenance_class), status: str(d.status), form: str(d.form), recorded_verdict: str(d.verdict), erasure: e.erased });
      continue;
    }
    const doc = parse(dataOf(e).raw);
    if (doc !== undefined) receipts.set(id, doc);
  }
  for (const e of list) if (e.erased !== undefined && e.type === 'OutcomeReported') erased.outcomes.set(e.stream_id.slice('outcome:'.length), e.erased);
  const anyErased = erased.receipts.size + erased.entries.size + erased.commitments.length + erased.outcomes.size > 0;
  const input: ReconcileInput = {
    plan: inForce.plan,
    plan_meta: planMeta(inForce.usable, first),
    record,
    receipts,
    corrections,
    recorders: ctx.recorders,
    // Outcome reports naming the subject and answering its recorded calls (by receipt id), in ledger order (issues 18, 26).
    outcomes: outcomeInputs(outcomeSourcesOf(list), receiptIds, asOf, subject),
    ...(subject.kind === 'job' ? { other_jobs: ctx.otherJobs ?? new Map<string, string[]>() } : {}),
    as_of_position: asOf,
    ...(anyErased ? { erased: erased as ErasedEvidence } : {}),
  };
  return { ok: true, input, receipt_ids: receiptIds };
}
