import { bool, boolParam, int, pages, placeholders, Queryable } from '../database/rows';
import type { RecordedBy } from '../core/ledger/event-hash';
import type { Writer } from '../ledger/events.repository';
import type { StoredAttestation } from '../core/aer1/attestation';

/** A row of the `timelines` read model. */
export interface TimelineRow {
  job_id: string;
  /** `append` (built entry by entry here) or `import` (a complete timeline recorded elsewhere). */
  source: 'append' | 'import';
  entry_count: number;
  head_digest: string | null;
  closed: boolean;
  verdict: string;
  reasons: string[];
  construction: string | null;
  first_position: number;
  last_position: number;
}

/** A row of the `timeline_entries` read model. */
export interface TimelineEntryRow {
  job_id: string;
  seq: number;
  raw: string;
  entry_digest: string | null;
  receipt_id: string | null;
  tool: string | null;
  provenance_class: string | null;
  close: boolean;
  position: number;
  /** `full` or `metadata` (canonical bytes served to auditors only), fixed when recorded. */
  publication: string;
}

/** A row of the `commitments` read model. */
export interface CommitmentRow {
  id: string;
  job_id: string;
  raw: string;
  binding: boolean;
  reasons: string[];
  entry_count_at_record: number;
  position: number;
  recorded_at: string;
  /** The signed note and its keys; null: self-asserted. */
  attestation: StoredAttestation | null;
  /** `ledger` for the ledger's own commitment, else null (posted by a client). */
  issued_by: 'ledger' | null;
}

/** Rows per multi-row INSERT of entries. */
const ROWS_PER_INSERT = 100;
/** Seqs per `IN (...)` look-up. */
const SEQ_PAGE = 200;

function toTimeline(r: Record<string, unknown>): TimelineRow {
  return {
    job_id: r.job_id as string,
    source: r.source as 'append' | 'import',
    entry_count: int(r.entry_count),
    head_digest: (r.head_digest as string | null) ?? null,
    closed: bool(r.closed),
    verdict: r.verdict as string,
    reasons: JSON.parse(r.reasons as string) as string[],
    construction: (r.construction as string | null) ?? null,
    first_position: int(r.first_position),
    last_position: int(r.last_position),
  };
}

function toEntry(r: Record<string, unknown>): TimelineEntryRow {
  return {
    job_id: r.job_id as string,
    seq: int(r.seq),
    raw: r.raw as string,
    entry_digest: (r.entry_digest as string | null) ?? null,
    receipt_id: (r.receipt_id as string | null) ?? null,
    tool: (r.tool as string | null) ?? null,
    provenance_class: (r.provenance_class as string | null) ?? null,
    close: bool(r.close),
    position: int(r.position),
    publication: (r.publication as string | undefined) ?? 'full',
  };
}

function toCommitment(r: Record<string, unknown>): CommitmentRow {
  return {
    id: r.id as string,
    job_id: r.job_id as string,
    raw: r.raw as string,
    binding: bool(r.binding),
    reasons: JSON.parse(r.reasons as string) as string[],
    entry_count_at_record: int(r.entry_count_at_record),
    position: int(r.position),
    recorded_at: r.recorded_at as string,
    attestation: typeof r.attestation === 'string' ? (JSON.parse(r.attestation) as StoredAttestation) : null,
    issued_by: r.issued_by === 'ledger' ? 'ledger' : null,
  };
}

export interface JobRow {
  job_id: string;
  source: string;
  entry_count: number | string;
  head_digest: string | null;
  closed: number | string | boolean;
  verdict: string;
  first_position: number | string;
}

/**
 * The `timelines`, `timeline_entries` and `commitments` tables: their SQL,
 * rows and mapping. Every method runs on the unit of work it is given (`q`:
 * the database outside a write, or the write transaction).
 */
export class TimelinesRepository {
  // ------------------------------------------------------------ writes (projection)

  /**
   * Erase the content of the rows written for the events at `positions`
   * (issue 29), to what their retained data replays: entries' `raw` '' and
   * `entry_digest` NULL; a timeline whose head came from one of them loses
   * its `head_digest`; commitments' `raw` '' and `attestation` NULL.
   */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], 500)) {
      const inList = placeholders(page.length);
      await q.query(`UPDATE timeline_entries SET raw = '', entry_digest = NULL WHERE position IN (${inList})`, page);
      await q.query(`UPDATE timelines SET head_digest = NULL WHERE last_position IN (${inList})`, page);
      await q.query(`UPDATE commitments SET raw = '', attestation = NULL WHERE position IN (${inList})`, page);
    }
  }

  /** Insert a timeline's summary row (`first_position` = `last_position` = the event's position). */
  async insertTimeline(q: Queryable, t: Omit<TimelineRow, 'first_position' | 'last_position'>, position: number): Promise<void> {
    await q.query(
      `INSERT INTO timelines (job_id, source, entry_count, head_digest, closed, verdict, reasons, construction, first_position, last_position)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [t.job_id, t.source, t.entry_count, t.head_digest, boolParam(t.closed), t.verdict, JSON.stringify(t.reasons), t.construction, position, position],
    );
  }

  /** Move an appended timeline's head to its new last entry. */
  async updateHead(q: Queryable, jobId: string, head: { entry_count: number; head_digest: string; closed: boolean; verdict: string; reasons: string[] }, position: number): Promise<void> {
    await q.query('UPDATE timelines SET entry_count = ?, head_digest = ?, closed = ?, verdict = ?, reasons = ?, last_position = ? WHERE job_id = ?', [
      head.entry_count,
      head.head_digest,
      boolParam(head.closed),
      head.verdict,
      JSON.stringify(head.reasons),
      position,
      jobId,
    ]);
  }

  /** Insert entry rows, {@link ROWS_PER_INSERT} per statement. */
  async insertEntries(q: Queryable, rows: readonly TimelineEntryRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const part = rows.slice(start, start + ROWS_PER_INSERT);
      const params: unknown[] = [];
      for (const r of part) params.push(r.job_id, r.seq, r.raw, r.entry_digest, r.receipt_id, r.tool, r.provenance_class, boolParam(r.close), r.position, r.publication);
      await q.query(`INSERT INTO timeline_entries (job_id, seq, raw, entry_digest, receipt_id, tool, provenance_class, close, position, publication) VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`, params);
    }
  }

  /** Insert a commitment row. */
  async insertCommitment(q: Queryable, c: CommitmentRow): Promise<void> {
    await q.query('INSERT INTO commitments (id, job_id, raw, binding, reasons, entry_count_at_record, position, recorded_at, attestation, issued_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      c.id,
      c.job_id,
      c.raw,
      boolParam(c.binding),
      JSON.stringify(c.reasons),
      c.entry_count_at_record,
      c.position,
      c.recorded_at,
      c.attestation === null ? null : JSON.stringify(c.attestation),
      c.issued_by,
    ]);
  }

  // ------------------------------------------------------------ reads

  /** The timeline's summary row, or null. */
  async get(q: Queryable, jobId: string): Promise<TimelineRow | null> {
    const r = (await q.query<Record<string, unknown>>('SELECT * FROM timelines WHERE job_id = ?', [jobId]))[0];
    return r ? toTimeline(r) : null;
  }

  /** The entry with the highest seq (its seq and stored text), or null. */
  async lastEntry(q: Queryable, jobId: string): Promise<{ seq: number; raw: string } | null> {
    const r = (await q.query<{ seq: number | string; raw: string }>('SELECT seq, raw FROM timeline_entries WHERE job_id = ? ORDER BY seq DESC LIMIT 1', [jobId]))[0];
    return r ? { seq: int(r.seq), raw: r.raw } : null;
  }

  /** At most `limit` entries with seq > `after`, in seq order. */
  async entryPage(q: Queryable, jobId: string, after: number, limit: number): Promise<TimelineEntryRow[]> {
    return (await q.query<Record<string, unknown>>('SELECT * FROM timeline_entries WHERE job_id = ? AND seq > ? ORDER BY seq LIMIT ?', [jobId, after, limit])).map(toEntry);
  }

  /** At most `limit` entries recorded by the event at `position` (an import) with seq > `after`, in seq order. */
  async entryPageAt(q: Queryable, jobId: string, position: number, after: number, limit: number): Promise<TimelineEntryRow[]> {
    return (await q.query<Record<string, unknown>>('SELECT * FROM timeline_entries WHERE job_id = ? AND position = ? AND seq > ? ORDER BY seq LIMIT ?', [jobId, position, after, limit])).map(toEntry);
  }

  /** Which of `ids` (as written in entries) an entry of the job with seq below `beforeSeq` (null: any entry) names (the `receipt_id` index). */
  async receiptIdsNamedBefore(q: Queryable, jobId: string, beforeSeq: number | null, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows =
      beforeSeq === null
        ? await q.query<{ receipt_id: string }>(`SELECT DISTINCT receipt_id FROM timeline_entries WHERE job_id = ? AND receipt_id IN (${placeholders(ids.length)})`, [jobId, ...ids])
        : await q.query<{ receipt_id: string }>(`SELECT DISTINCT receipt_id FROM timeline_entries WHERE job_id = ? AND seq < ? AND receipt_id IN (${placeholders(ids.length)})`, [jobId, beforeSeq, ...ids]);
    return new Set(rows.map((r) => r.receipt_id));
  }

  /** At most `limit` distinct receipt ids (lowercase) the job's entries at or below `upTo` name, greater than `after`, in order (reports: their recorders). */
  async receiptIdPage(q: Queryable, jobId: string, after: string, upTo: number, limit: number): Promise<string[]> {
    const rows = await q.query<{ id: string }>(
      'SELECT DISTINCT LOWER(receipt_id) AS id FROM timeline_entries WHERE job_id = ? AND position <= ? AND receipt_id IS NOT NULL AND LOWER(receipt_id) > ? ORDER BY id LIMIT ?',
      [jobId, upTo, after, limit],
    );
    return rows.map((r) => r.id);
  }

  /**
   * For each of `receiptIds` (lowercase) named by an entry of another job than
   * `jobId` recorded at or below position `asOf`, those jobs, sorted (the
   * `receipt_id` index; ids without another job are absent). Entries are never
   * altered, so the answer for a position never changes (issue 26).
   */
  async otherJobsNamingAsOf(q: Queryable, jobId: string, receiptIds: string[], asOf: number): Promise<Map<string, string[]>> {
    const acc = new Map<string, Set<string>>();
    const ids = [...new Set(receiptIds)];
    for (let i = 0; i < ids.length; i += SEQ_PAGE) {
      const chunk = ids.slice(i, i + SEQ_PAGE);
      const rows = await q.query<{ receipt_id: string; job_id: string }>(
        `SELECT DISTINCT receipt_id, job_id FROM timeline_entries WHERE receipt_id IN (${placeholders(chunk.length)}) AND job_id <> ? AND position <= ?`,
        [...chunk, jobId, asOf],
      );
      for (const r of rows) (acc.get(r.receipt_id) ?? acc.set(r.receipt_id, new Set()).get(r.receipt_id)!).add(r.job_id);
    }
    return new Map([...acc].map(([k, v]) => [k, [...v].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))]));
  }

  /** True when any entry of the job was recorded under a `metadata` publication setting. */
  async hasMetadataEntries(q: Queryable, jobId: string): Promise<boolean> {
    return (await q.query<Record<string, unknown>>("SELECT 1 AS one FROM timeline_entries WHERE job_id = ? AND publication = 'metadata' LIMIT 1", [jobId])).length > 0;
  }

  /** Every entry of the job, in seq order. */
  async entries(q: Queryable, jobId: string): Promise<TimelineEntryRow[]> {
    return (await q.query<Record<string, unknown>>('SELECT * FROM timeline_entries WHERE job_id = ? ORDER BY seq', [jobId])).map(toEntry);
  }

  /** The stored texts of the entries at `seqs`, keyed by seq (absent seqs are missing). */
  async rawAtSeqs(q: Queryable, jobId: string, seqs: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < seqs.length; i += SEQ_PAGE) {
      const chunk = seqs.slice(i, i + SEQ_PAGE);
      const rows = await q.query<{ seq: number | string; raw: string }>(`SELECT seq, raw FROM timeline_entries WHERE job_id = ? AND seq IN (${placeholders(chunk.length)})`, [jobId, ...chunk]);
      for (const r of rows) out.set(int(r.seq), r.raw);
    }
    return out;
  }

  /** The receipt ids the job's entries name (lowercase), without repeats. */
  async receiptIds(q: Queryable, jobId: string): Promise<string[]> {
    return (await q.query<{ receipt_id: string | null }>('SELECT DISTINCT receipt_id FROM timeline_entries WHERE job_id = ?', [jobId])).flatMap((r) => (r.receipt_id ? [r.receipt_id] : []));
  }

  /** Where a receipt (lowercase id) stands in timelines: job and seq, ordered. */
  /** The job timeline entries naming a receipt, each with the key (and owner) that recorded it (null before attribution). */
  async placesOfReceipt(q: Queryable, receiptId: string): Promise<{ job_id: string; seq: number; writer: Writer | null }[]> {
    const rows = await q.query<{ job_id: string; seq: number | string; key_id: string | null; key_name: string | null; owner: string | null }>(
      `SELECT t.job_id AS job_id, t.seq AS seq, e.key_id AS key_id, e.key_name AS key_name, k.owner AS owner
       FROM timeline_entries t LEFT JOIN events e ON e.position = t.position LEFT JOIN api_keys k ON k.id = e.key_id
       WHERE LOWER(t.receipt_id) = ? ORDER BY t.job_id, t.seq`,
      [receiptId],
    );
    return rows.map((r) => ({
      job_id: r.job_id,
      seq: int(r.seq),
      writer: r.key_id !== null && r.key_name !== null ? { key_id: r.key_id, name: r.key_name, owner: r.owner ?? null } : null,
    }));
  }

  /** When the ledger recorded the job's last entry (its event's `recorded_at`), or null. */
  async lastEntryRecordedAt(q: Queryable, jobId: string): Promise<string | null> {
    const r = (
      await q.query<{ recorded_at: string }>('SELECT e.recorded_at AS recorded_at FROM timeline_entries t JOIN events e ON e.position = t.position WHERE t.job_id = ? ORDER BY t.seq DESC LIMIT 1', [jobId])
    )[0];
    return r?.recorded_at ?? null;
  }

  /** The job's commitments, in record order. */
  async commitments(q: Queryable, jobId: string): Promise<CommitmentRow[]> {
    return (await q.query<Record<string, unknown>>('SELECT * FROM commitments WHERE job_id = ? ORDER BY position', [jobId])).map(toCommitment);
  }

  /** The job's commitments in record order, each with the key that recorded it (null before attribution). */
  async commitmentsWithWriters(q: Queryable, jobId: string): Promise<(CommitmentRow & { recorded_by: RecordedBy | null })[]> {
    const rows = await q.query<Record<string, unknown>>(
      'SELECT c.*, e.key_id AS key_id, e.key_name AS key_name FROM commitments c LEFT JOIN events e ON e.position = c.position WHERE c.job_id = ? ORDER BY c.position',
      [jobId],
    );
    return rows.map((c) => ({ ...toCommitment(c), recorded_by: c.key_id != null && c.key_name != null ? { key_id: c.key_id as string, name: c.key_name as string } : null }));
  }

  /** The ledger-issued commitment of the job (the first, there is at most one per close), or null. */
  async ledgerIssued(q: Queryable, jobId: string): Promise<CommitmentRow | null> {
    const r = (await q.query<Record<string, unknown>>("SELECT * FROM commitments WHERE job_id = ? AND issued_by = 'ledger' ORDER BY position LIMIT 1", [jobId]))[0];
    return r ? toCommitment(r) : null;
  }

  /** How many endpoint commitments clients posted for the job (the ledger-issued one is not counted). */
  async commitmentCount(q: Queryable, jobId: string): Promise<number> {
    return int((await q.query<{ n: number | string }>('SELECT COUNT(*) AS n FROM commitments WHERE job_id = ? AND issued_by IS NULL', [jobId]))[0]?.n ?? 0);
  }

  /** The id of the first commitment of the job posted by a client with exactly the text `raw` and the same attestation note (null: self-asserted), or null. */
  async commitmentIdByText(q: Queryable, jobId: string, raw: string, note: string | null = null): Promise<string | null> {
    const rows = await q.query<{ id: string; attestation: string | null }>('SELECT id, attestation FROM commitments WHERE job_id = ? AND raw = ? AND issued_by IS NULL ORDER BY position', [jobId, raw]);
    return rows.find((r) => (r.attestation === null ? null : (JSON.parse(r.attestation) as StoredAttestation).note) === note)?.id ?? null;
  }

  /** timelines whose first event is after a ledger position, in that order. */
  async jobsAfter(q: Queryable, p: { after: number; limit: number }): Promise<(JobRow & { position: number | string })[]> {
    return q.query<JobRow & { position: number | string }>(
      'SELECT job_id, source, entry_count, head_digest, closed, verdict, first_position, first_position AS position FROM timelines WHERE first_position > ? ORDER BY first_position LIMIT ?',
      [p.after, p.limit + 1],
    );
  }
}
