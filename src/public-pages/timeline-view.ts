/**
 * Reads one job timeline and its endpoint commitments straight from the
 * read-model tables and verifies them with the core (S7, rev 09), so the
 * public page does not depend on the timelines module's service API.
 */
import { Check, checkCommitment, has, isObject, isUuid, JsonObject, TimelineResult, TimelineVerifier } from '../aer1';
import { DatabaseService } from '../database/database.service';

export interface TimelineEntryView {
  seq: number;
  tool: string | null;
  provenance_class: string | null;
  receipt_id: string | null;
  /** Recomputed -07 entry digest (S7.1), or the stored one when it cannot be recomputed. */
  entry_digest: string | null;
  reasons: string[];
  close: boolean;
}

export interface CommitmentView {
  id: string;
  recorded_at: string;
  /** Re-checked now against the visible timeline. */
  binding: boolean;
  verdict: string;
  reasons: string[];
  checks: Check[];
  commitment: unknown;
  witness: Record<string, unknown> | null;
}

export interface TimelineView {
  job_id: string;
  verdict: string;
  reasons: string[];
  construction: string | null;
  entry_count: number;
  closed: boolean;
  final_entry_digest: string | null;
  checks: Check[];
  limits: string[];
  provenance: Record<string, number>;
  /** True only when some endpoint commitment binds the visible timeline now (S7.3). */
  truncation_excluded: boolean;
  commitments: CommitmentView[];
  /** One page of the entries: those with seq > `page.after`, at most `page.limit` (the verdict covers them all). */
  entries: TimelineEntryView[];
  page: EntryPage;
  stored: { verdict: string | null; source: string | null } | null;
}

/** Which entries a page shows: seq > `after`, at most `limit`; `next_after` continues, null on the last page. */
export interface EntryPage {
  after: number;
  limit: number;
  next_after: number | null;
}

/** Entries per job page unless `?limit=` says otherwise (at most {@link MAX_PAGE_ENTRIES}). */
export const DEFAULT_PAGE_ENTRIES = 200;
export const MAX_PAGE_ENTRIES = 1000;

interface EntryRow {
  seq: number | string;
  raw: string;
  entry_digest: string | null;
  receipt_id: string | null;
  tool: string | null;
  provenance_class: string | null;
  close: number | string | boolean;
}

/** Load and verify the timeline of `jobId`; null when the ledger holds no such job. */
export async function loadTimelineView(db: DatabaseService, jobId: string, range: { after: number; limit: number } = { after: 0, limit: DEFAULT_PAGE_ENTRIES }): Promise<TimelineView | null> {
  const stored = (await db.query<{ verdict: string; source: string }>('SELECT verdict, source FROM timelines WHERE job_id = ?', [jobId]))[0] ?? null;
  const rows = await db.query<EntryRow>('SELECT seq, raw, entry_digest, receipt_id, tool, provenance_class, close FROM timeline_entries WHERE job_id = ? ORDER BY seq', [jobId]);
  if (!stored && rows.length === 0) return null;
  const v = new TimelineVerifier({ collectEntries: true });
  for (const r of rows) {
    let entry: unknown;
    try {
      entry = JSON.parse(r.raw);
    } catch {
      entry = undefined;
    }
    v.push(entry);
  }
  const result: TimelineResult = v.finish();
  const commitmentRows = await db.query<{ id: string; raw: string; recorded_at: string }>('SELECT id, raw, recorded_at FROM commitments WHERE job_id = ? ORDER BY position', [jobId]);
  const commitments: CommitmentView[] = commitmentRows.map((c) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(c.raw);
    } catch {
      parsed = undefined;
    }
    // Stored either as the commitment itself or as an envelope {commitment, witness, ...}.
    let commitment: unknown = parsed;
    let envelope: JsonObject | undefined;
    if (isObject(parsed) && has(parsed, 'commitment') && !has(parsed, 'final_entry_digest')) {
      envelope = parsed;
      commitment = parsed.commitment;
    }
    const r = checkCommitment(result, commitment, envelope);
    return { id: c.id, recorded_at: c.recorded_at, binding: r.binding, verdict: r.verdict, reasons: r.reasons, checks: r.checks, commitment, witness: r.witness };
  });
  const first = rows.findIndex((r) => Number(r.seq) > range.after);
  const from = first < 0 ? rows.length : first;
  const shown = rows.slice(from, from + range.limit);
  const entries: TimelineEntryView[] = shown.map((r, j) => {
    const o = result.entries?.[from + j];
    return {
      seq: Number(r.seq),
      tool: r.tool,
      provenance_class: r.provenance_class,
      receipt_id: r.receipt_id,
      entry_digest: o?.entry_digest ?? r.entry_digest,
      reasons: o?.reasons ?? [],
      close: r.close === true || Number(r.close) === 1,
    };
  });
  return {
    job_id: jobId,
    verdict: result.verdict,
    reasons: result.reasons,
    construction: result.construction,
    entry_count: result.entry_count,
    closed: result.closed,
    final_entry_digest: result.final_entry_digest,
    checks: result.checks,
    limits: result.limits,
    provenance: result.provenance,
    truncation_excluded: commitments.some((c) => c.binding),
    commitments,
    entries,
    page: { after: range.after, limit: range.limit, next_after: from + shown.length < rows.length && shown.length > 0 ? Number(shown[shown.length - 1].seq) : null },
    stored,
  };
}

/** True when `id` can be linked as a receipt page. */
export function linkableReceiptId(id: string | null): id is string {
  return isUuid(id);
}
