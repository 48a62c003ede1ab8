/**
 * The rules of a timeline stream (S7.2: a chain that only grows, from a
 * genesis entry, one seq at a time, closed at most once; imported timelines
 * never grow), decided once. Pure: the state read in the write transaction
 * in, the events to append or a typed error (409) out. Whether an entry
 * extends the chain is the core's decision ({@link TimelineVerifier.continuing}).
 */
import { entryDigest, JsonObject, TimelineVerifier, ZERO_DIGEST } from '../core/aer1';
import { ConflictError } from '../common/errors';
import type { TimelineEntryAppended, TimelineImported, TimelineImportedData } from './timelines.events';

/** The head of a timeline: its last entry's seq and recomputed digest, and whether it closed the timeline. */
export interface TimelineHead {
  seq: number;
  digest: string;
  closed: boolean;
}

/** The head of a timeline with no entries. */
export const EMPTY_HEAD: TimelineHead = Object.freeze({ seq: 0, digest: ZERO_DIGEST, closed: false });

/**
 * The head of an appended timeline from its stored last entry (`seq` and the
 * entry's stored text): the S7.1 digest recomputed from the text, and whether
 * it closes the job. Throws when the stored entry does not recompute (a
 * stored head the ledger itself accepted always does).
 */
export function headOfStored(jobId: string, last: { seq: number; raw: string }): { head: TimelineHead; value: JsonObject } {
  if (last.raw === '') {
    // Issue 29: the head entry was erased, so the next entry's link to it cannot be checked: the job takes no more entries.
    throw new ConflictError('timeline_head_erased', `the last entry (seq ${last.seq}) of job ${jobId.slice(0, 200)} was erased: its digest is gone, so no entry can be linked to it; start a new job`, { job_id: jobId.slice(0, 200), seq: last.seq });
  }
  const value = JSON.parse(last.raw) as JsonObject;
  const digest = entryDigest(value);
  if (digest === null) throw new Error(`stored head entry of job ${jobId} does not recompute`);
  return { head: { seq: last.seq, digest, closed: value.close === true }, value };
}

/** What an append is decided on. */
export interface AppendState {
  /** How the timeline was started (null: no timeline yet). */
  source: 'append' | 'import' | null;
  head: TimelineHead;
  /** The last stored entry (parsed), when `head.seq` > 0: the chain continues from it. */
  last: unknown;
}

/** One entry of an append request, already checked alone (members, job, provenance). */
export interface EntryToAppend {
  /** The entry's exact source text. */
  text: string;
  e: JsonObject;
  seq: number;
  /** Its recomputed S7.1 digest. */
  digest: string;
}

/** The rule an entry breaks, in the order they are reported when it breaks several. */
const RULES = ['close_not_last', 'seq_not_contiguous', 'genesis_prev_digest', 'link_mismatch'] as const;

/**
 * Decide appending `entries` (in order) to the timeline of `jobId`: one
 * `TimelineEntryAppended` each and the new head. 409 `timeline_imported`
 * (an imported timeline never grows), `timeline_closed`,
 * `seq_not_contiguous`, `genesis_prev_digest`, `link_mismatch`, naming the
 * entry (`index`) and the head it was checked against.
 */
export function decideAppend(state: AppendState, jobId: string, entries: readonly EntryToAppend[], publication: 'full' | 'metadata'): { events: TimelineEntryAppended[]; head: TimelineHead } {
  const d = new AppendDecider(state, jobId, publication, entries.length);
  for (const { text, e, seq, digest } of entries) d.push(text, e, seq, digest);
  return d.decided();
}

/**
 * {@link decideAppend} entry by entry, for a caller that builds each entry
 * from the one before (the OTLP receiver links entry k + 1 to the digest of
 * entry k): {@link push} checks an entry with the same chain verifier and
 * gives its S7.1 digest as that check computed it (no second verifier per
 * entry), and {@link decided} answers exactly what `decideAppend` answers
 * for the same entries: the events and head, or the error of the first entry
 * that breaks a rule. `count` is the number of entries the request holds (the
 * errors say "entry k of the request" when it is more than one). 409
 * `timeline_imported` at once.
 */
export class AppendDecider {
  private readonly v: TimelineVerifier;
  private readonly events: TimelineEntryAppended[] = [];
  private head: TimelineHead;
  private index = 0;
  private broken: ConflictError | null = null;

  constructor(
    state: AppendState,
    private readonly jobId: string,
    private readonly publication: 'full' | 'metadata',
    private readonly count: number,
  ) {
    if (state.source === 'import') {
      throw new ConflictError('timeline_imported', `the timeline of job ${jobId} was imported complete; it cannot be extended`, { reasons: ['timeline_imported'], job_id: jobId });
    }
    this.v = state.head.seq === 0 ? new TimelineVerifier() : TimelineVerifier.continuing(state.head.seq, state.last, jobId);
    this.head = state.head;
  }

  /**
   * Check the next entry (`text` its exact text, `e` its value, `seq` its
   * seq) and return its S7.1 digest: `digest` when given (the caller's
   * recomputation), else the one the chain check computed (null for a
   * malformed entry). After an entry that breaks a rule, later entries are
   * not checked; {@link decided} throws that entry's error.
   */
  push(text: string, e: JsonObject, seq: number, digest?: string): string | null {
    const k = this.index++;
    if (this.broken) return digest ?? null;
    this.v.push(e);
    const own = digest ?? this.v.lastEntryDigest;
    const rule = RULES.find((r) => this.v.hasReason(r));
    if (rule) {
      this.broken = ruleError(rule, this.jobId, this.head, seq, k, this.count);
      return own;
    }
    const close = e.close === true;
    this.events.push({
      type: 'TimelineEntryAppended',
      data: { job_id: this.jobId, seq, raw: text, entry_digest: own as string, receipt_id: e.id as string, tool: e.tool as string, provenance_class: e.provenance_class as string, close, publication: this.publication },
    });
    this.head = { seq, digest: own as string, closed: close };
    return own;
  }

  /** The events of the entries pushed and the new head; throws the error of the first entry that broke a rule. */
  decided(): { events: TimelineEntryAppended[]; head: TimelineHead } {
    if (this.broken) throw this.broken;
    return { events: this.events, head: this.head };
  }
}

function ruleError(rule: (typeof RULES)[number], jobId: string, head: TimelineHead, seq: number, index: number, count: number): ConflictError {
  const where = count > 1 ? ` (entry ${index + 1} of the request)` : '';
  const details = { job_id: jobId, index, head: { seq: head.seq, entry_digest: head.seq === 0 ? null : head.digest, closed: head.closed } };
  switch (rule) {
    case 'close_not_last':
      return new ConflictError('timeline_closed', `job ${jobId} is closed at seq ${head.seq}: nothing follows a closing entry (S7.2)${where}`, { reasons: ['timeline_closed'], ...details });
    case 'seq_not_contiguous':
      return new ConflictError('seq_not_contiguous', `seq ${seq} does not extend the head: expected ${head.seq + 1}${where}`, { reasons: ['seq_not_contiguous'], expected_seq: head.seq + 1, ...details });
    case 'genesis_prev_digest':
    case 'link_mismatch': {
      const msg = rule === 'genesis_prev_digest' ? 'the first entry must carry 64 zeros as prev_digest (S7.2)' : `prev_digest must be the recomputed digest of entry ${head.seq}: ${head.digest}`;
      return new ConflictError(rule, `${msg}${where}`, { reasons: [rule], expected_prev_digest: head.digest, ...details });
    }
  }
}

/** What an import is decided on: the timeline's source, and the body text of its `TimelineImported` event when it was imported. */
export interface ImportState {
  source: 'append' | 'import' | null;
  imported_raw: string | null;
}

/**
 * Decide importing a complete timeline (`data.raw` the body text): the
 * `TimelineImported` event, or `existing` when the same text was imported
 * before. 409 `timeline_exists` for anything else on a job that has a timeline.
 */
export function decideImport(state: ImportState, data: TimelineImportedData): { existing: true } | { events: [TimelineImported] } {
  if (state.source === null) return { events: [{ type: 'TimelineImported', data }] };
  if (state.source === 'import' && state.imported_raw === data.raw) return { existing: true };
  throw new ConflictError('timeline_exists', `job ${data.job_id} already has a timeline (${state.source === 'import' ? 'imported with different bytes' : 'built by appends'}); records are never altered`, {
    reasons: ['timeline_exists'],
    job_id: data.job_id,
  });
}
