import { insertRow, int, pages, placeholders, Queryable } from '../database/rows';
import type { ReceiptRecordedData } from './receipts.events';

/** A row of the `receipts` read model. */
export interface ReceiptRow {
  id: string;
  id_as_given: string;
  form: string;
  wrapped_in: string | null;
  raw: string;
  verdict: string;
  reasons: string;
  provenance_class: string | null;
  tool: string | null;
  status: string | null;
  output_hash: string | null;
  created_at: string | null;
  supersedes: string | null;
  superseded_by: string | null;
  position: number;
  recorded_at: string;
  /** `full` or `metadata` (canonical bytes served to auditors only), fixed when recorded. */
  publication: string;
}

/** What ingestion needs to know of a recorded receipt: a few columns of its row. */
export type RecordedReceipt = Pick<ReceiptRow, 'id' | 'raw' | 'verdict' | 'provenance_class' | 'supersedes' | 'position'>;
const RECORDED_COLUMNS = 'id, raw, verdict, provenance_class, supersedes, position';
/** The columns {@link ReceiptsRepository.insert} writes, in its values' order (`superseded_by` NULL: set by a later correction). */
const RECEIPT_COLUMNS = [
  'id',
  'id_as_given',
  'form',
  'wrapped_in',
  'raw',
  'verdict',
  'reasons',
  'provenance_class',
  'tool',
  'status',
  'output_hash',
  'created_at',
  'supersedes',
  'superseded_by',
  'position',
  'recorded_at',
  'publication',
] as const;
/** Ids per look-up query (well under SQLite's and PostgreSQL's bound-parameter limits). */
const LOOKUP_PAGE = 500;

function toRow(r: ReceiptRow): ReceiptRow {
  return { ...r, position: int(r.position) };
}

/** A listing row; `erased`: the content was erased (issue 29), as 0/1 (SQLite) or a boolean (PostgreSQL). */
export type SummaryRow = Pick<ReceiptRow, 'id' | 'recorded_at' | 'position' | 'provenance_class' | 'tool' | 'status' | 'verdict' | 'output_hash'> & { erased: boolean | number };

/**
 * The `receipts` table (ids lowercased): its SQL, rows and mapping. Every
 * method runs on the unit of work it is given (`q`: the database outside a
 * write, or the write transaction).
 */
export class ReceiptsRepository {
  /** Insert the row of a `ReceiptRecorded` event at `position`; in a write transaction, queued ({@link insertRow}) and written before the next statement. */
  async insert(q: Queryable, d: ReceiptRecordedData, position: number, recordedAt: string): Promise<void> {
    await insertRow(q, 'receipts', RECEIPT_COLUMNS, [
      d.id.toLowerCase(),
      d.id,
      d.form,
      d.wrapped_in,
      d.raw,
      d.verdict,
      JSON.stringify(d.reasons),
      d.provenance_class,
      d.tool,
      d.status,
      d.output_hash,
      d.created_at,
      d.supersedes,
      null,
      position,
      recordedAt,
      d.publication ?? 'full',
    ]);
  }

  /** Erase the content of the receipts recorded at `positions` (issue 29): `raw` '' and `output_hash` NULL, as their retained data replays. */
  async erasePayloads(q: Queryable, positions: readonly number[]): Promise<void> {
    for (const page of pages([...positions], LOOKUP_PAGE)) await q.query(`UPDATE receipts SET raw = '', output_hash = NULL WHERE position IN (${placeholders(page.length)})`, page);
  }

  /** Mark receipt `id` superseded by `supersededBy` (both lowercased). */
  async markSuperseded(q: Queryable, id: string, supersededBy: string): Promise<void> {
    await q.query('UPDATE receipts SET superseded_by = ? WHERE id = ?', [supersededBy.toLowerCase(), id.toLowerCase()]);
  }

  /** The row of receipt `id` (lowercase), or null. */
  async get(q: Queryable, id: string): Promise<ReceiptRow | null> {
    const row = (await q.query<ReceiptRow>('SELECT * FROM receipts WHERE id = ?', [id]))[0];
    return row ? toRow(row) : null;
  }

  /** The rows of the receipts among `ids` (lowercase), keyed by id, looked up in pages. */
  async getMany(q: Queryable, ids: string[]): Promise<Map<string, ReceiptRow>> {
    const out = new Map<string, ReceiptRow>();
    for (const page of pages([...new Set(ids)], LOOKUP_PAGE)) {
      for (const r of await q.query<ReceiptRow>(`SELECT * FROM receipts WHERE id IN (${placeholders(page.length)})`, page)) out.set(r.id, toRow(r));
    }
    return out;
  }

  /**
   * The recorded receipts among `ids` (lowercase): the columns ingestion
   * needs. On PostgreSQL one statement with the ids as one array parameter
   * (`= ANY`: planned in no time, where a 500-value IN list costs
   * milliseconds to plan each time); elsewhere looked up in pages.
   */
  async findRecorded(q: Queryable, ids: string[]): Promise<Map<string, RecordedReceipt>> {
    const found = new Map<string, RecordedReceipt>();
    if ((q as { dialect?: unknown }).dialect === 'postgres' && ids.length > 1) {
      const rows = await q.query<RecordedReceipt>(`SELECT ${RECORDED_COLUMNS} FROM receipts WHERE id = ANY(?::text[])`, [[...new Set(ids)]]);
      for (const r of rows) found.set(r.id, r);
      return found;
    }
    for (const page of pages([...new Set(ids)], LOOKUP_PAGE)) {
      const rows = await q.query<RecordedReceipt>(`SELECT ${RECORDED_COLUMNS} FROM receipts WHERE id IN (${placeholders(page.length)})`, page);
      for (const r of rows) found.set(r.id, r);
    }
    return found;
  }

  /** The ledger positions of the receipts among `ids` (lowercase), without their bytes: which are recorded, and since when. */
  async positions(q: Queryable, ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const page of pages([...new Set(ids)], LOOKUP_PAGE)) {
      for (const r of await q.query<{ id: string; position: number | string }>(`SELECT id, position FROM receipts WHERE id IN (${placeholders(page.length)})`, page)) out.set(r.id, Number(r.position));
    }
    return out;
  }

  /** The stored texts of the receipts among `ids` (one page of ids; lowercase), keyed by id. */
  async rawByIds(q: Queryable, ids: string[]): Promise<{ k: string; raw: string }[]> {
    return q.query<{ k: string; raw: string }>(`SELECT id AS k, raw FROM receipts WHERE id IN (${placeholders(ids.length)})`, ids);
  }

  /** receipts after a ledger position, in position order, metadata columns only (never `raw`). */
  async receiptsAfter(q: Queryable, p: { after: number; limit: number }): Promise<SummaryRow[]> {
    return q.query<SummaryRow>("SELECT id, recorded_at, position, provenance_class, tool, status, verdict, output_hash, (raw = '') AS erased FROM receipts WHERE position > ? ORDER BY position LIMIT ?", [p.after, p.limit + 1]);
  }

  /** Receipts whose declared `output_hash` is exactly `outputHash`, oldest first, at most `limit` (issue 14 search). */
  async byOutputHash(q: Queryable, outputHash: string, limit: number): Promise<{ id: string; position: number }[]> {
    const rows = await q.query<{ id: string; position: number | string }>('SELECT id, position FROM receipts WHERE output_hash = ? ORDER BY position LIMIT ?', [outputHash, limit]);
    return rows.map((r) => ({ id: r.id, position: int(r.position) }));
  }
}
