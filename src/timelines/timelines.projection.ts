import { verifyTimeline } from '../core/aer1';
import type { RetainedImportEntry } from '../core/ledger/retained';
import { ndjsonTexts, splitJsonArray } from '../common/raw-json';
import { Tx } from '../database/database.service';
import { RecordedEvent } from '../ledger/event';
import { Projection, UNCHECKED, unhandled } from '../ledger/projections';
import { boolParam } from '../database/rows';
import { EndpointCommitmentRecordedData, TIMELINE_EVENT_TYPES, TimelineEntryAppendedData, TimelineEvent, TimelineImportedData } from './timelines.events';
import { CommitmentRow, TimelineEntryRow, TimelineRow, TimelinesRepository } from './timelines.repository';

/** The `timelines`, `timeline_entries` and `commitments` read models. */
export class TimelinesProjection implements Projection<TimelineEvent> {
  readonly name = 'timelines';
  readonly tables = ['timelines', 'timeline_entries', 'commitments'];
  readonly eventTypes = TIMELINE_EVENT_TYPES;

  constructor(
    private readonly timelines: TimelinesRepository,
  ) {}

  /** Issue 29: the rows of erased payloads keep only what their retained data replays. */
  erasePayloads(tx: Tx, positions: readonly number[]): Promise<void> {
    return this.timelines.erasePayloads(tx, positions);
  }

  async evolve(tx: Tx, e: RecordedEvent<TimelineEvent>): Promise<void> {
    switch (e.type) {
      case 'TimelineEntryAppended':
        return this.appended(tx, e.position, e.data);
      case 'TimelineImported':
        return this.imported(tx, e.position, e.data);
      case 'EndpointCommitmentRecorded':
        return this.commitment(tx, e.position, e.recorded_at, e.data);
      default:
        return unhandled(e);
    }
  }

  private async appended(tx: Tx, position: number, d: TimelineEntryAppendedData): Promise<void> {
    const head = appendedHead(d);
    if (d.seq === 1) {
      await this.timelines.insertTimeline(tx, { job_id: d.job_id, source: 'append', entry_count: 1, construction: '-07', ...head }, position);
    } else {
      await this.timelines.updateHead(tx, d.job_id, { entry_count: d.seq, ...head }, position);
    }
    await this.timelines.insertEntries(tx, [appendedEntryRow(position, d)]);
  }

  private async imported(tx: Tx, position: number, d: TimelineImportedData): Promise<void> {
    const kept = retainedEntries(d);
    if (kept) {
      // Erased (issue 29): the entries as their PayloadsErased event retains them, no content.
      await this.timelines.insertTimeline(tx, importedTimeline(d, kept.length > 0 && kept[kept.length - 1].close), position);
      await this.timelines.insertEntries(tx, kept.map((k, i) => retainedEntryRow(position, d, k, i)));
      return;
    }
    const { texts, values } = importedValues(position, d);
    // Per-entry digests are recomputed by the core from the stored texts (deterministic on replay).
    const result = verifyTimeline(values, { collectEntries: true });
    await this.timelines.insertTimeline(tx, importedTimeline(d, result.closed), position);
    await this.timelines.insertEntries(
      tx,
      values.map((v, k) => importedEntryRow(position, d, texts[k], v, result.entries?.[k]?.entry_digest ?? null)),
    );
  }

  private async commitment(tx: Tx, position: number, recordedAt: string, d: EndpointCommitmentRecordedData): Promise<void> {
    await this.timelines.insertCommitment(tx, commitmentRow(position, recordedAt, d));
  }

  /**
   * The rows `evolve` writes for one job's events, without a database (the
   * per-record guard's check of the job page and verifier). The one thing
   * not recomputed: the digests of imported entries (`entry_digest`, a
   * SHA-256 chain over every entry), which the page and the verifier
   * recompute from the entries' texts anyway; the projection audit checks
   * the stored column.
   */
  expectedRows(events: readonly RecordedEvent<TimelineEvent>[]): Record<string, Record<string, unknown>[]> {
    let timeline: Record<string, unknown> | null = null;
    const entries: Record<string, unknown>[] = [];
    const commitments: Record<string, unknown>[] = [];
    const stored = (t: Omit<TimelineRow, 'first_position' | 'last_position'>, first: number, last: number): Record<string, unknown> => ({
      ...t,
      closed: boolParam(t.closed),
      reasons: JSON.stringify(t.reasons),
      first_position: first,
      last_position: last,
    });
    for (const e of events) {
      switch (e.type) {
        case 'TimelineEntryAppended': {
          const d = e.data;
          const head = appendedHead(d);
          if (d.seq === 1) timeline = stored({ job_id: d.job_id, source: 'append', entry_count: 1, construction: '-07', ...head }, e.position, e.position);
          else if (timeline) Object.assign(timeline, { entry_count: d.seq, head_digest: head.head_digest, closed: boolParam(head.closed), verdict: head.verdict, reasons: JSON.stringify(head.reasons), last_position: e.position });
          entries.push(storedEntry(appendedEntryRow(e.position, d)));
          break;
        }
        case 'TimelineImported': {
          const kept = retainedEntries(e.data);
          if (kept) {
            timeline = stored(importedTimeline(e.data, kept.length > 0 && kept[kept.length - 1].close), e.position, e.position);
            kept.forEach((k, i) => entries.push(storedEntry(retainedEntryRow(e.position, e.data, k, i))));
            break;
          }
          const { texts, values } = importedValues(e.position, e.data);
          const last = values[values.length - 1];
          // The closing rule of S7.2 as verifyTimeline applies it: the last entry closes the chain.
          const closed = isClosingEntry(last);
          timeline = stored(importedTimeline(e.data, closed), e.position, e.position);
          values.forEach((v, k) => entries.push({ ...storedEntry(importedEntryRow(e.position, e.data, texts[k], v, null)), entry_digest: UNCHECKED }));
          break;
        }
        case 'EndpointCommitmentRecorded': {
          const c = commitmentRow(e.position, e.recorded_at, e.data);
          commitments.push({ ...c, binding: boolParam(c.binding), reasons: JSON.stringify(c.reasons), attestation: c.attestation === null ? null : JSON.stringify(c.attestation) });
          break;
        }
        default:
          return unhandled(e);
      }
    }
    return { timelines: timeline ? [timeline] : [], timeline_entries: entries, commitments };
  }
}

/** The head an appended entry moves the timeline to. Appends are checked to extend a -07 chain, so the only rule a timeline built this way can still fail is closing (S7.2). */
/** The entries an erased import retains (src/core/ledger/retained.ts), or null when its content is held. */
function retainedEntries(d: TimelineImportedData): RetainedImportEntry[] | null {
  const e = (d as TimelineImportedData & { erased?: boolean; entries?: RetainedImportEntry[] });
  return e.erased === true && Array.isArray(e.entries) ? e.entries : null;
}

function retainedEntryRow(position: number, d: TimelineImportedData, k: RetainedImportEntry, i: number): TimelineEntryRow {
  return { job_id: d.job_id, seq: k.seq ?? i + 1, raw: '', entry_digest: null, receipt_id: k.receipt_id, tool: k.tool, provenance_class: k.provenance_class, close: k.close, position, publication: d.publication ?? 'full' };
}

function appendedHead(d: TimelineEntryAppendedData): { head_digest: string; closed: boolean; verdict: string; reasons: string[] } {
  return { head_digest: d.entry_digest, closed: d.close, verdict: d.close ? 'valid' : 'invalid', reasons: d.close ? [] : ['not_closed'] };
}

function appendedEntryRow(position: number, d: TimelineEntryAppendedData): TimelineEntryRow {
  return {
    job_id: d.job_id,
    seq: d.seq,
    raw: d.raw,
    entry_digest: d.entry_digest,
    receipt_id: d.receipt_id.toLowerCase(),
    tool: d.tool,
    provenance_class: d.provenance_class,
    close: d.close,
    position,
    publication: d.publication ?? 'full',
  };
}

function importedValues(position: number, d: TimelineImportedData): { texts: string[]; values: Record<string, unknown>[] } {
  const texts = importedEntryTexts(d);
  if (texts === null) throw new Error(`TimelineImported at position ${position}: raw is not a JSON array`);
  return { texts, values: texts.map((t) => JSON.parse(t) as Record<string, unknown>) };
}

function importedTimeline(d: TimelineImportedData, closed: boolean): Omit<TimelineRow, 'first_position' | 'last_position'> {
  return { job_id: d.job_id, source: 'import', entry_count: d.entry_count, head_digest: d.final_entry_digest, closed, verdict: d.verdict, reasons: d.reasons, construction: d.construction };
}

function importedEntryRow(position: number, d: TimelineImportedData, text: string, v: Record<string, unknown>, digest: string | null): TimelineEntryRow {
  return {
    job_id: d.job_id,
    seq: v.seq as number,
    raw: text,
    entry_digest: digest,
    receipt_id: typeof v.id === 'string' ? v.id.toLowerCase() : null,
    tool: typeof v.tool === 'string' ? v.tool : null,
    provenance_class: typeof v.provenance_class === 'string' ? v.provenance_class : null,
    close: v.close === true,
    position,
    publication: d.publication ?? 'full',
  };
}

function commitmentRow(position: number, recordedAt: string, d: EndpointCommitmentRecordedData): CommitmentRow {
  return {
    id: d.id,
    job_id: d.job_id,
    raw: d.raw,
    binding: d.binding,
    reasons: d.reasons,
    entry_count_at_record: d.entry_count_at_record,
    position,
    recorded_at: recordedAt,
    attestation: d.attestation ?? null,
    issued_by: d.issued_by ?? null,
  };
}

function storedEntry(r: TimelineEntryRow): Record<string, unknown> {
  return { ...r, close: boolParam(r.close) };
}

/** The exact texts of the entries of an import: the lines of NDJSON, or the elements of a JSON array (null when `raw` is neither). */
export function importedEntryTexts(d: Pick<TimelineImportedData, 'raw' | 'format'>): string[] | null {
  return d.format === 'ndjson' ? ndjsonTexts(d.raw) : splitJsonArray(d.raw);
}

/** Whether the last entry closes the timeline, as the core's verifier decides `closed` (S7.2: an object whose `close` is true). */
function isClosingEntry(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && (v as { close?: unknown }).close === true;
}
