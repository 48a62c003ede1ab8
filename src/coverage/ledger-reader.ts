/**
 * As-of reads straight from the `events` table: the events a coverage
 * report spans (assembled by the core, src/core/coverage/assemble.ts), a
 * workflow receipt, first positions and who recorded a stream, as they stood
 * at a ledger position. Events at or below a position never change, so a
 * report built from them is reproducible. (The timeline and workflow read
 * models are not used: they show only the present.)
 */
import { isObject } from '../core/aer1';
import { correctionChains, LedgerEvent, namedReceiptIds, subjectRecord, subjectStream } from '../core/coverage/assemble';
import type { PlanSubject } from '../core/coverage/plan';
import { NO_TRUST } from '../core/aer1/attestation';
import type { StoredEvent } from '../core/ledger/event-hash';
import type { ErasureNote } from '../core/coverage/types';
import { parseStoredJson, Queryable } from '../database/rows';
import { EventDataRow, EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import type { WorkflowEvent } from '../workflows/workflows.events';

export type { Queryable } from '../database/rows';

const IN_CHUNK = 200;

/** The events table (stateless: every read runs on the `q` it is given). */
const events = new EventsRepository();
/** The erasure of each erased one of `positions` (ErasureService.erasuresOf): the `PayloadsErased` position, who, when, why. */
export type ErasuresOf = (positions: readonly number[]) => Promise<ReadonlyMap<number, { erasure_id: string; position: number; erased_at: string; key_name: string; legal_basis: string; reason: string }>>;

/** A stored event of a stream whose union is `E`, its data parsed as that union gives it. */
function parsed<E extends { type: string; data: unknown }>(r: EventDataRow): E {
  return { type: r.type, data: JSON.parse(r.data) as unknown } as E;
}

export interface WorkflowAsOf {
  workflow: unknown | null;
  /** Earliest position among the workflow stream and its step receipts' streams. */
  first_position: number | null;
  step_receipt_ids: string[];
}

/** The latest workflow receipt recorded for `workflowId` as of `asOf`. */
export async function workflowAsOf(q: Queryable, workflowId: string, asOf: number): Promise<WorkflowAsOf> {
  const rows = await events.streamAsOf(q, streams.workflow(workflowId), asOf, 'WorkflowReceiptRecorded');
  if (rows.length === 0) return { workflow: null, first_position: null, step_receipt_ids: [] };
  const workflow = parseStoredJson(parsed<WorkflowEvent>(rows[rows.length - 1]).data.raw) ?? null;
  const ids: string[] = [];
  if (isObject(workflow) && Array.isArray(workflow.steps)) {
    for (const s of workflow.steps) if (isObject(s) && typeof s.receipt_id === 'string') ids.push(s.receipt_id.toLowerCase());
  }
  const receiptsFirst = await receiptsFirstPosition(q, ids, asOf);
  const first = receiptsFirst === null ? rows[0].position : Math.min(rows[0].position, receiptsFirst);
  return { workflow, first_position: first, step_receipt_ids: ids };
}

/** Earliest position, as of `asOf`, of any event of the receipts with these ids (their `receipt:` streams); null when none is recorded. */
export async function receiptsFirstPosition(q: Queryable, ids: Iterable<string>, asOf: number): Promise<number | null> {
  const wanted = [...new Set([...ids].map((id) => streams.receipt(id)))];
  let first: number | null = null;
  for (let i = 0; i < wanted.length; i += IN_CHUNK) {
    const chunk = wanted.slice(i, i + IN_CHUNK);
    const p = await events.firstPositionAsOf(q, chunk, asOf);
    if (p !== null) first = first === null ? p : Math.min(first, p);
  }
  return first;
}

/**
 * Position of the first recorded event of a job's execution as of `asOf`:
 * the earliest event of its timeline stream or of any receipt its entries
 * name (docs/coverage.md). `entryIds` are the receipt ids the job's entries
 * name as of `asOf`.
 */
export async function jobFirstPosition(q: Queryable, jobId: string, asOf: number, entryIds: Iterable<string>): Promise<number | null> {
  const timeline = await events.firstPositionAsOf(q, [streams.timeline(jobId)], asOf);
  const receipts = await receiptsFirstPosition(q, entryIds, asOf);
  if (timeline === null) return receipts;
  return receipts === null ? timeline : Math.min(timeline, receipts);
}

/**
 * Who wrote a stream's events, as of a position: the recorder identity of
 * each key (its `owner`, or for a key without an owner its key name) and the
 * key names, both sorted without repeats. `unattributed` counts events that
 * name no key (written before attribution). Keys never change owner, so the
 * answer for a position never changes.
 */
export interface StreamRecorders {
  owners: string[];
  key_names: string[];
  unattributed: number;
}

function sorted(xs: Iterable<string>): string[] {
  return [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The recorders of each of `streamIds` as of `asOf` (only streams with an
 * event are in the map). `types`, when given, limits the events looked at
 * (receipts: `ReceiptRecorded` only, not a correction appended to the stream).
 */
export async function recordersAsOf(q: Queryable, streamIds: Iterable<string>, asOf: number, types?: string[]): Promise<Map<string, StreamRecorders>> {
  const wanted = [...new Set(streamIds)];
  const acc = new Map<string, { owners: Set<string>; keys: Set<string>; unattributed: number }>();
  for (let i = 0; i < wanted.length; i += IN_CHUNK) {
    const chunk = wanted.slice(i, i + IN_CHUNK);
    for (const r of await events.writersOfStreamsAsOf(q, chunk, asOf, types)) {
      let a = acc.get(r.stream_id);
      if (!a) acc.set(r.stream_id, (a = { owners: new Set(), keys: new Set(), unattributed: 0 }));
      if (r.key_id === null || r.key_name === null) a.unattributed++;
      else {
        a.keys.add(r.key_name);
        a.owners.add(r.owner ?? r.key_name);
      }
    }
  }
  return new Map([...acc].map(([k, a]) => [k, { owners: sorted(a.owners), key_names: sorted(a.keys), unattributed: a.unattributed }]));
}

/** A stored event as the core's assembler reads it (the key named only when the event names its key id). */
function ledgerEvent(e: StoredEvent): LedgerEvent {
  return { position: e.position, stream_id: e.stream_id, type: e.type, key_name: e.key_id != null && e.key_name != null ? e.key_name : null, data: e.data };
}

/**
 * The erased ones of `list` (data '', issue 29) given the data their
 * `PayloadsErased` event retained (no content) and marked `erased` with that
 * erasure; the others unchanged. An erased event whose erasure is not found
 * keeps '' as data and `erased: null`.
 */
export async function withRetained(q: Queryable, list: LedgerEvent[], erasuresOf: ErasuresOf): Promise<LedgerEvent[]> {
  const gone = list.filter((e) => e.data === '').map((e) => e.position);
  if (gone.length === 0) return list;
  const rows = await erasuresOf(gone);
  const by = await events.atPositions(q, [...new Set([...rows.values()].map((r) => r.position))]);
  return list.map((e) => {
    if (e.data !== '') return e;
    const row = rows.get(e.position);
    const retained = row ? (parseStoredJson(by.get(row.position)?.data ?? '') as { retained?: Record<string, unknown> } | undefined)?.retained?.[String(e.position)] : undefined;
    const erased: ErasureNote | null = row ? { erasure_id: row.erasure_id, position: row.position, erased_at: row.erased_at, by: row.key_name, legal_basis: row.legal_basis, reason: row.reason } : null;
    return { ...e, data: retained === undefined ? '' : JSON.stringify(retained), erased };
  });
}

/** Every event of `streamIds` at or below `asOf`, paged, in position order (erased ones with their retained data, {@link withRetained}). */
async function streamsAsOf(q: Queryable, streamIds: Iterable<string>, asOf: number, erasuresOf: ErasuresOf): Promise<LedgerEvent[]> {
  const wanted = [...new Set(streamIds)];
  const out: LedgerEvent[] = [];
  for (let i = 0; i < wanted.length; i += IN_CHUNK) out.push(...(await events.ofStreams(q, wanted.slice(i, i + IN_CHUNK), asOf)).map(ledgerEvent));
  return withRetained(q, out.sort((a, b) => a.position - b.position), erasuresOf);
}

/** Where the events of a report live besides the subject's and its receipts' streams: its plans and the outcome reports answering its receipts. */
export interface ReportStreams {
  /** The ids of the subject's plans. */
  planIds: readonly string[];
  /** The outcome ids answering any of `receiptIds` (lowercase) at or below `asOf`. */
  outcomeIds(receiptIds: string[], asOf: number): Promise<string[]>;
  /** The erasures of erased events (issue 29): their retained data stands in for their content. */
  erasuresOf: ErasuresOf;
}

/**
 * The events a coverage report on `subject` as of `asOf` spans, in ledger
 * order: its timeline (or workflow) stream, the streams of the receipts it
 * names and, following corrections (S9), of their corrections, its plans'
 * streams and the streams of the outcome reports answering its receipts.
 * The core assembles the report's input from them
 * (src/core/coverage/assemble.ts `assembleReportInput`); this only fetches.
 */
export async function reportEventsAsOf(q: Queryable, subject: PlanSubject, asOf: number, where: ReportStreams): Promise<LedgerEvent[]> {
  const own = await streamsAsOf(q, [subjectStream(subject)], asOf, where.erasuresOf);
  // Entries and commitments are judged by the assembler; here only the receipt ids matter (no trust needed).
  const named = namedReceiptIds(subjectRecord(own, subject, NO_TRUST).record);
  const got: LedgerEvent[] = [...own];
  // The receipts named, then the corrections their chains reach (the core walks them), until no new receipt is reached.
  const fetched = new Set<string>();
  for (let want = named; want.length > 0; ) {
    for (const id of want) fetched.add(id);
    got.push(...(await streamsAsOf(q, want.map((id) => streams.receipt(id)), asOf, where.erasuresOf)));
    want = [...new Set([...correctionChains(got, named).values()].flat())].filter((id) => !fetched.has(id));
  }
  got.push(...(await streamsAsOf(q, where.planIds.map((id) => streams.plan(id)), asOf, where.erasuresOf)));
  got.push(...(await streamsAsOf(q, (await where.outcomeIds(named, asOf)).map((id) => streams.outcome(id)), asOf, where.erasuresOf)));
  const byPosition = new Map(got.map((e) => [e.position, e]));
  return [...byPosition.values()].sort((a, b) => a.position - b.position);
}
