/**
 * As-of reads straight from the `events` table: the timeline, endpoint
 * commitment, workflow receipt and receipts as they stood at a ledger
 * position. Events at or below a position never change, so a report built
 * from them is reproducible. (The timeline and workflow read models are not
 * used: they show only the present.)
 */
import { has, isObject } from '../core/aer1';
import { parseStoredJson, Queryable } from '../database/rows';
import { EventDataRow, EventsRepository } from '../ledger/events.repository';
import { streams } from '../ledger/streams';
import { ndjsonTexts } from '../common/raw-json';
import type { ReceiptRecorded } from '../receipts/receipts.events';
import type { TimelineEvent } from '../timelines/timelines.events';
import type { WorkflowEvent } from '../workflows/workflows.events';
import type { StoredAttestation } from '../core/aer1/attestation';

export type { Queryable } from '../database/rows';

const IN_CHUNK = 200;

/** The events table (stateless: every read runs on the `q` it is given). */
const events = new EventsRepository();

/** A stored event of a stream whose union is `E`, its data parsed as that union gives it. */
function parsed<E extends { type: string; data: unknown }>(r: EventDataRow): E {
  return { type: r.type, data: JSON.parse(r.data) as unknown } as E;
}

/** A commitment stored with its witness envelope (`{commitment, witness, ...}`) is unwrapped to the commitment. */
function commitmentOf(doc: unknown): unknown {
  return isObject(doc) && has(doc, 'commitment') && !has(doc, 'job_id') ? doc.commitment : doc;
}

/** One endpoint commitment as recorded: its record id, the commitment, its ledger position. */
export interface CommitmentAsOf {
  id: string | null;
  value: unknown;
  /** The envelope `{commitment, witness, ...}` when it was recorded in one. */
  envelope?: Record<string, unknown>;
  recorded_position: number;
  /** The commitment's exact stored text. */
  raw: string;
  /** The signed note recorded with it (ledger-issued or attested), or null (self-asserted). */
  stored_attestation: StoredAttestation | null;
}

export interface TimelineAsOf {
  /** Entries in order, or null when no entry is recorded. */
  entries: unknown[] | null;
  /** Every endpoint commitment recorded for the job, in record order (all are judged together). */
  commitments: CommitmentAsOf[];
  /** Position of the first event of the job's timeline stream. */
  first_position: number | null;
}

/** The job's timeline and every endpoint commitment recorded for it as of `asOf`. */
export async function timelineAsOf(q: Queryable, jobId: string, asOf: number): Promise<TimelineAsOf> {
  const rows = await events.streamAsOf(q, streams.timeline(jobId), asOf);
  let entries: unknown[] | null = null;
  const commitments: CommitmentAsOf[] = [];
  for (const r of rows) {
    const e = parsed<TimelineEvent>(r);
    switch (e.type) {
      case 'TimelineEntryAppended':
        (entries ??= []).push(parseStoredJson(e.data.raw));
        break;
      case 'TimelineImported': {
        if (e.data.format === 'ndjson') entries = ndjsonTexts(e.data.raw).map((t) => parseStoredJson(t));
        else {
          const all = parseStoredJson(e.data.raw);
          entries = Array.isArray(all) ? all : [all];
        }
        break;
      }
      case 'EndpointCommitmentRecorded': {
        const doc = parseStoredJson(e.data.raw);
        const value = commitmentOf(doc);
        commitments.push({
          id: typeof e.data.id === 'string' ? e.data.id : null,
          value,
          ...(value !== doc && isObject(doc) ? { envelope: doc } : {}),
          recorded_position: r.position,
          raw: e.data.raw,
          stored_attestation: e.data.attestation ?? null,
        });
        break;
      }
    }
  }
  return { entries, commitments, first_position: rows.length ? rows[0].position : null };
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

/** Receipts recorded as of `asOf` (the documents as received), keyed by lowercase id. */
export async function receiptsAsOf(q: Queryable, ids: Iterable<string>, asOf: number): Promise<Map<string, unknown>> {
  const wanted = [...new Set([...ids].map((id) => id.toLowerCase()))];
  const out = new Map<string, unknown>();
  for (let i = 0; i < wanted.length; i += IN_CHUNK) {
    const chunk = wanted.slice(i, i + IN_CHUNK).map((id) => streams.receipt(id));
    const rows = await events.ofTypeInStreamsAsOf(q, 'ReceiptRecorded', chunk, asOf);
    for (const r of rows) {
      const doc = parseStoredJson(parsed<ReceiptRecorded>(r).data.raw);
      if (doc !== undefined) out.set(r.stream_id.slice('receipt:'.length), doc);
    }
  }
  return out;
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

/** The receipt ids the entries name (their `id` members), in order, without repeats. */
export function entryReceiptIds(entries: readonly unknown[] | null): string[] {
  const ids = new Set<string>();
  for (const e of entries ?? []) if (isObject(e) && typeof e.id === 'string') ids.add(e.id.toLowerCase());
  return [...ids];
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

/**
 * The correction chains of receipts as of `asOf` (S9): for each id of `ids`
 * that was corrected, the ids of its corrections in order, following
 * corrections of corrections to the latest (`ReceiptCorrected` events, each
 * naming `superseded_by`; the latest one of a receipt counts, as its
 * `superseded_by` in the read model). Ids not corrected are absent. Lowercase ids.
 */
export async function correctionsAsOf(q: Queryable, ids: Iterable<string>, asOf: number): Promise<Map<string, string[]>> {
  const next = new Map<string, string>();
  let frontier = [...new Set([...ids].map((id) => id.toLowerCase()))];
  const seen = new Set(frontier);
  while (frontier.length > 0) {
    const found: string[] = [];
    for (let i = 0; i < frontier.length; i += IN_CHUNK) {
      const chunk = frontier.slice(i, i + IN_CHUNK).map((id) => streams.receipt(id));
      const rows = (await events.ofTypeInStreamsAsOf(q, 'ReceiptCorrected', chunk, asOf)).sort((x, y) => x.position - y.position);
      for (const r of rows) {
        const by = (JSON.parse(r.data) as { superseded_by?: unknown }).superseded_by;
        const from = r.stream_id.slice('receipt:'.length);
        if (typeof by !== 'string') continue;
        // A receipt corrected twice: the later correction is the one followed (as the receipt's `superseded_by`).
        const to = by.toLowerCase();
        next.set(from, to);
        if (!seen.has(to)) {
          seen.add(to);
          found.push(to);
        }
      }
    }
    frontier = found;
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
