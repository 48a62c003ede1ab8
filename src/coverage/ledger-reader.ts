/**
 * As-of reads straight from the `events` table: the timeline, endpoint
 * commitment, workflow receipt and receipts as they stood at a ledger
 * position. Events at or below a position never change, so a report built
 * from them is reproducible. (The timeline and workflow read models are not
 * used: they show only the present.)
 */
import { has, isObject } from '../core/aer1';
import { streams } from '../ledger/streams';

/** Anything that runs `?`-placeholder SQL: a write transaction or the database service. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

interface EventRow {
  position: number | string;
  stream_id: string;
  type: string;
  data: string;
}

const IN_CHUNK = 200;

function parseData(e: EventRow): Record<string, unknown> {
  return JSON.parse(e.data) as Record<string, unknown>;
}

function parseRaw(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
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
  const rows = await q.query<EventRow>('SELECT position, stream_id, type, data FROM events WHERE stream_id = ? AND position <= ? ORDER BY position', [streams.timeline(jobId), asOf]);
  let entries: unknown[] | null = null;
  const commitments: CommitmentAsOf[] = [];
  for (const r of rows) {
    const d = parseData(r);
    if (r.type === 'TimelineEntryAppended') (entries ??= []).push(parseRaw(d.raw));
    else if (r.type === 'TimelineImported') {
      const all = parseRaw(d.raw);
      entries = Array.isArray(all) ? all : [all];
    } else if (r.type === 'EndpointCommitmentRecorded') {
      const doc = parseRaw(d.raw);
      const value = commitmentOf(doc);
      commitments.push({ id: typeof d.id === 'string' ? d.id : null, value, ...(value !== doc && isObject(doc) ? { envelope: doc } : {}), recorded_position: Number(r.position) });
    }
  }
  return { entries, commitments, first_position: rows.length ? Number(rows[0].position) : null };
}

export interface WorkflowAsOf {
  workflow: unknown | null;
  /** Earliest position among the workflow stream and its step receipts' streams. */
  first_position: number | null;
  step_receipt_ids: string[];
}

/** The latest workflow receipt recorded for `workflowId` as of `asOf`. */
export async function workflowAsOf(q: Queryable, workflowId: string, asOf: number): Promise<WorkflowAsOf> {
  const rows = await q.query<EventRow>(
    "SELECT position, stream_id, type, data FROM events WHERE stream_id = ? AND type = 'WorkflowReceiptRecorded' AND position <= ? ORDER BY position",
    [streams.workflow(workflowId), asOf],
  );
  if (rows.length === 0) return { workflow: null, first_position: null, step_receipt_ids: [] };
  const workflow = parseRaw(parseData(rows[rows.length - 1]).raw) ?? null;
  const ids: string[] = [];
  if (isObject(workflow) && Array.isArray(workflow.steps)) {
    for (const s of workflow.steps) if (isObject(s) && typeof s.receipt_id === 'string') ids.push(s.receipt_id.toLowerCase());
  }
  const receiptsFirst = await receiptsFirstPosition(q, ids, asOf);
  const first = receiptsFirst === null ? Number(rows[0].position) : Math.min(Number(rows[0].position), receiptsFirst);
  return { workflow, first_position: first, step_receipt_ids: ids };
}

/** Receipts recorded as of `asOf` (the documents as received), keyed by lowercase id. */
export async function receiptsAsOf(q: Queryable, ids: Iterable<string>, asOf: number): Promise<Map<string, unknown>> {
  const wanted = [...new Set([...ids].map((id) => id.toLowerCase()))];
  const out = new Map<string, unknown>();
  for (let i = 0; i < wanted.length; i += IN_CHUNK) {
    const chunk = wanted.slice(i, i + IN_CHUNK).map((id) => streams.receipt(id));
    const rows = await q.query<EventRow>(
      `SELECT position, stream_id, type, data FROM events WHERE type = 'ReceiptRecorded' AND position <= ? AND stream_id IN (${chunk.map(() => '?').join(', ')})`,
      [asOf, ...chunk],
    );
    for (const r of rows) {
      const d = parseData(r);
      const doc = parseRaw(d.raw);
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
    const r = await q.query<{ p: number | string | null }>(`SELECT MIN(position) AS p FROM events WHERE position <= ? AND stream_id IN (${chunk.map(() => '?').join(', ')})`, [asOf, ...chunk]);
    if (r[0]?.p !== null && r[0]?.p !== undefined) first = first === null ? Number(r[0].p) : Math.min(first, Number(r[0].p));
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
  const r = await q.query<{ p: number | string | null }>('SELECT MIN(position) AS p FROM events WHERE stream_id = ? AND position <= ?', [streams.timeline(jobId), asOf]);
  const timeline = r[0]?.p === null || r[0]?.p === undefined ? null : Number(r[0].p);
  const receipts = await receiptsFirstPosition(q, entryIds, asOf);
  if (timeline === null) return receipts;
  return receipts === null ? timeline : Math.min(timeline, receipts);
}
