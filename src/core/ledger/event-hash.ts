/**
 * The ledger's own hash chain: each event stores the previous event's hash
 * and its own hash over a canonical serialization of its content, so any
 * change to a stored event, or a removed or inserted one, is detectable by
 * recomputation. Pure: the service and `aer1 ledger verify` share it.
 */
import { createHash, hash } from 'node:crypto';
import { sha256Hex, writeJsonString, ZERO_DIGEST } from '../aer1';

/** The hash that precedes the first event. */
export const LEDGER_GENESIS_HASH = ZERO_DIGEST;

/** Who wrote an event: the API key's id and name (never its secret); `system` for the ledger's own events. */
export interface RecordedBy {
  key_id: string;
  name: string;
}

/** The ledger's own events (batch results, anything no key asked for). */
export const SYSTEM: RecordedBy = Object.freeze({ key_id: 'system', name: 'system' });

/**
 * Serialization versions: 1 (events written before key attribution, hashed
 * without the key), 2 (the key that wrote the event is hashed with it) and 3
 * (issue 29: no content in the leaf; the event's data is a payload committed
 * to by a salted hash, so it can be erased while every proof stays valid).
 */
export type EventFormat = 1 | 2 | 3;
export const CURRENT_EVENT_FORMAT: EventFormat = 3;

/**
 * The `payload_commitment` of a format 3 event: `sha256:` + lowercase hex
 * SHA-256(salt || payload), `salt` 32 bytes, `payload` the exact bytes of the
 * event data (UTF-8 of its JSON text). Up to {@link COMMITMENT_SCRATCH_MAX}
 * bytes, salt and payload are written into one reused buffer and hashed in
 * one call (no Hash object, no copy of the payload per event; the buffer is
 * zeroed after); larger payloads are streamed through a Hash. Both give
 * {@link payloadCommitmentReference}'s answer (test/core/ledger/fast-paths.spec.ts).
 */
export function payloadCommitment(salt: Buffer, payload: string | Buffer): string {
  // A JavaScript string's UTF-8 is at most 3 bytes per UTF-16 code unit.
  const max = salt.length + (typeof payload === 'string' ? 3 * payload.length : payload.length);
  if (max > COMMITMENT_SCRATCH_MAX) return payloadCommitmentReference(salt, payload);
  if (scratch.length < max) scratch = Buffer.alloc(Math.max(max, 2 * scratch.length));
  salt.copy(scratch, 0);
  const end = salt.length + (typeof payload === 'string' ? scratch.write(payload, salt.length, 'utf8') : payload.copy(scratch, salt.length));
  const digest = hash('sha256', scratch.subarray(0, end), 'hex');
  scratch.fill(0, 0, end); // the payload's bytes are not left behind in the process
  return 'sha256:' + digest;
}

/** Payloads (with their salt) up to this many bytes are hashed from the reused buffer of {@link payloadCommitment}. */
export const COMMITMENT_SCRATCH_MAX = 1 << 20;
let scratch = Buffer.alloc(16 * 1024);

/** {@link payloadCommitment} written the straightforward way (a Hash fed the salt, then the payload's UTF-8): the reference its fast path is tested against. */
export function payloadCommitmentReference(salt: Buffer, payload: string | Buffer): string {
  return 'sha256:' + createHash('sha256').update(salt).update(typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload).digest('hex');
}

/** A value of a format 3 event's public identifiers: a string, or a non-negative safe integer (entry seq, plan version). */
export type PublicIdValue = string | number;

/**
 * The canonical text of a format 3 event's public identifiers: a JSON object
 * with members in code-point order of their names, strings written by the
 * S7.1 writer, integers in integer form. Throws {@link EventFormatError} on
 * a value that is neither a string nor a non-negative safe integer.
 */
export function publicIdsText(ids: Readonly<Record<string, PublicIdValue>>): string {
  const names = Object.keys(ids).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const parts: string[] = [];
  for (const k of names) {
    const v = ids[k];
    if (typeof v === 'string') parts.push(writeJsonString(k) + ':' + writeJsonString(v));
    else if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) parts.push(writeJsonString(k) + ':' + String(v));
    else throw new EventFormatError(`public identifier ${k} is not a string or a non-negative integer`);
  }
  return '{' + parts.join(',') + '}';
}

/** One stored event, as read back from the `events` table. */
export interface StoredEvent {
  position: number;
  stream_id: string;
  stream_position: number;
  type: string;
  /** The JSON text of the event data, exactly as stored. */
  data: string;
  /** RFC 3339 UTC time the ledger recorded the event. */
  recorded_at: string;
  prev_hash: string;
  event_hash: string;
  /** Serialization version of the hash input (absent = 1, as in databases before attribution). */
  format?: number | string | null;
  /** The key that wrote the event (format 2 and 3); null for format 1. */
  key_id?: string | null;
  key_name?: string | null;
  /** Format 3: the position of the previous event of the same stream (0 for its first). */
  stream_prev?: number | null;
  /** Format 3: the canonical JSON text of the record's public identifiers ({@link publicIdsText}), exactly as hashed. */
  public_ids?: string | null;
  /** Format 3: `sha256:` + hex SHA-256(salt || data) ({@link payloadCommitment}). */
  payload_commitment?: string | null;
  /** Format 3: the 32-byte salt of the commitment, lowercase hex; null once the payload is erased. Never in the leaf. */
  payload_salt?: string | null;
}

/**
 * The canonical serialization of an event's content, a JSON array written
 * with ASCII-only string escaping (the S7.1 writer) and `data` as a string,
 * so it is hashed exactly as stored:
 * - format 1: `["aer1-ledger-event/1", position, prev_hash, recorded_at,
 *   stream_id, stream_position, type, data]`;
 * - format 2: `["aer1-ledger-event/2", position, prev_hash, recorded_at,
 *   stream_id, stream_position, type, key_id, key_name, data]`: the key that
 *   wrote the event is part of what is hashed.
 * - format 3: `["aer1-ledger-event/3", position, prev_hash, recorded_at,
 *   stream_id, stream_position, stream_prev, type, key_id, key_name,
 *   {public ids}, payload_commitment]`: no content; the public identifiers
 *   object is the stored `public_ids` text, exactly (docs/event-formats.md).
 * Throws on an unknown format or a format-2/3 event without its fields.
 */
export function eventHashInput(e: Omit<StoredEvent, 'event_hash'>): string {
  const format = e.format === undefined || e.format === null ? 1 : Number(e.format);
  const common = String(e.position) + ',' + writeJsonString(e.prev_hash) + ',' + writeJsonString(e.recorded_at) + ',' +
    writeJsonString(e.stream_id) + ',' + String(e.stream_position) + ',' + writeJsonString(e.type) + ',';
  if (format === 1) return '["aer1-ledger-event/1",' + common + writeJsonString(e.data) + ']';
  if (format === 2) {
    if (typeof e.key_id !== 'string' || typeof e.key_name !== 'string') throw new EventFormatError('a format-2 event names the key that wrote it');
    return '["aer1-ledger-event/2",' + common + writeJsonString(e.key_id) + ',' + writeJsonString(e.key_name) + ',' + writeJsonString(e.data) + ']';
  }
  if (format === 3) {
    if (typeof e.key_id !== 'string' || typeof e.key_name !== 'string') throw new EventFormatError('a format-3 event names the key that wrote it');
    const prev = e.stream_prev === null || e.stream_prev === undefined ? NaN : Number(e.stream_prev);
    if (!Number.isSafeInteger(prev) || prev < 0) throw new EventFormatError('a format-3 event names the position of the previous event of its stream');
    if (typeof e.public_ids !== 'string' || !e.public_ids.startsWith('{') || typeof e.payload_commitment !== 'string' || !PAYLOAD_COMMITMENT.test(e.payload_commitment)) {
      throw new EventFormatError('a format-3 event carries its public identifiers and a sha256: payload commitment');
    }
    return (
      '["aer1-ledger-event/3",' + String(e.position) + ',' + writeJsonString(e.prev_hash) + ',' + writeJsonString(e.recorded_at) + ',' + writeJsonString(e.stream_id) + ',' +
      String(e.stream_position) + ',' + String(prev) + ',' + writeJsonString(e.type) + ',' + writeJsonString(e.key_id) + ',' + writeJsonString(e.key_name) + ',' + e.public_ids + ',' + writeJsonString(e.payload_commitment) + ']'
    );
  }
  throw new EventFormatError(`unknown event format ${String(e.format)}`);
}

/** A `payload_commitment` as written: `sha256:` and 64 lowercase hex digits. */
export const PAYLOAD_COMMITMENT = /^sha256:[0-9a-f]{64}$/;

/**
 * What can be checked of a stored event's payload: `held` (format 3, salt
 * and data present: the commitment is recomputable), `erased` (the payload
 * was erased: format 3 with no salt, or format 1/2 whose data was cleared),
 * `in_leaf` (format 1/2: the data is part of the leaf itself).
 */
export type PayloadState = 'held' | 'erased' | 'in_leaf';

/** The {@link PayloadState} of a stored event (an erased payload's data is stored as the empty string). */
export function payloadState(e: Pick<StoredEvent, 'format' | 'data' | 'payload_salt'>): PayloadState {
  const format = e.format === undefined || e.format === null ? 1 : Number(e.format);
  if (format === 3) return typeof e.payload_salt === 'string' && e.payload_salt !== '' ? 'held' : 'erased';
  return e.data === '' ? 'erased' : 'in_leaf';
}

/** An event whose stored format cannot be serialized (unknown version, missing key). */
export class EventFormatError extends Error {}

/** SHA-256 of {@link eventHashInput}, lowercase hex. */
export function eventHash(e: Omit<StoredEvent, 'event_hash'>): string {
  return sha256Hex(eventHashInput(e));
}

/**
 * The event's leaf in the verifiable log (issue 14): the exact bytes whose
 * SHA-256 is its `event_hash`, i.e. {@link eventHashInput} as UTF-8 (it is
 * ASCII: the writer escapes every character above U+007E). Leaf index =
 * position - 1; leaf hash = SHA-256(0x00 || leaf) (RFC 6962 section 2.1).
 */
export function eventLeaf(e: Omit<StoredEvent, 'event_hash'>): Buffer {
  return Buffer.from(eventHashInput(e), 'utf8');
}

/**
 * {@link eventLeaf}, or null for a stored event that cannot be serialized
 * (an unknown format, a format-2 row without its key: a row changed behind
 * the ledger). Readers that must answer about such a row (audits, proofs,
 * pages) report it instead of failing.
 */
export function eventLeafOrNull(e: Omit<StoredEvent, 'event_hash'>): Buffer | null {
  try {
    return eventLeaf(e);
  } catch (err) {
    if (err instanceof EventFormatError) return null;
    throw err;
  }
}

/** At most this many positions are listed per kind of erased event in a {@link LedgerChainReport} (the counts are exact). */
export const LISTED_ERASED = 1000;

/**
 * The leaf of a stored event as far as it can be rebuilt: `{ leaf }`, or
 * `{ erased: true }` for a format 1/2 event whose data (part of its leaf) was
 * erased (issue 29: its stored leaf hash stands, named as not recomputable),
 * or `{ leaf: null }` for a row that cannot be serialized (changed behind
 * the ledger). A format 3 leaf holds no content: erased or not, it is rebuilt.
 */
export function storedLeaf(e: Omit<StoredEvent, 'event_hash'>): { leaf: Buffer; erased?: false } | { leaf: null; erased: boolean } {
  if (Number(e.format ?? 1) !== 3 && e.data === '') return { leaf: null, erased: true };
  const leaf = eventLeafOrNull(e);
  return leaf ? { leaf } : { leaf: null, erased: false };
}

/** What a format 1/2 leaf whose data was erased says in place of its bytes. */
export const ERASED_LEAF_NOTE = 'content erased (issue 29): this format 1/2 leaf held the content itself, so it can no longer be served or recomputed; its stored leaf hash is proven as it stands';

/** Outcome of recomputing the ledger chain. */
export interface LedgerChainReport {
  ok: boolean;
  checked: number;
  head: { position: number; event_hash: string } | null;
  /** The first position that does not verify, and why. */
  first_failure: { position: number; reason: 'position_gap' | 'prev_hash_mismatch' | 'event_hash_mismatch' | 'payload_commitment_mismatch' | 'payload_missing' | 'erased_payload_held' | 'data_not_json' | 'bad_format'; detail: string } | null;
  /**
   * Events whose payload was erased (issue 29). `payload_erased`: format 3,
   * the leaf recomputed and checked, the payload no longer checkable.
   * `leaf_not_recomputed`: format 1 or 2, whose leaf held the erased data,
   * so its stored hash is taken as it is (the next event's `prev_hash` still
   * links to it): these are named, never passed silently. Positions listed
   * up to {@link LISTED_ERASED} each; `count` exact.
   */
  erased: { payload_erased: { count: number; positions: number[] }; leaf_not_recomputed: { count: number; positions: number[] } };
}

/**
 * Incremental verifier for the ledger chain: feed events in position order.
 * Checks positions are 1, 2, 3..., each prev_hash equals the previous
 * event's recomputed hash, each stored event_hash equals the recomputed one,
 * and a format 3 event's held payload matches its commitment. Erased
 * payloads are listed in the report (see {@link LedgerChainReport.erased}).
 */
export class LedgerChainVerifier {
  private prevHash = LEDGER_GENESIS_HASH;
  private expected = 1;
  private checked = 0;
  private failure: LedgerChainReport['first_failure'] = null;
  private head: LedgerChainReport['head'] = null;
  private readonly erased: LedgerChainReport['erased'] = { payload_erased: { count: 0, positions: [] }, leaf_not_recomputed: { count: 0, positions: [] } };
  /** Every position whose payload is gone, and every position a PayloadsErased event names: the first must be within the second, and the second within the first. */
  private readonly gone: number[] = [];
  private readonly goneSet = new Set<number>();
  private readonly named = new Set<number>();

  /** Returns false once a failure is found (later events are not checked). */
  push(e: StoredEvent): boolean {
    if (this.failure) return false;
    this.checked++;
    const position = Number(e.position);
    if (position !== this.expected) {
      this.failure = { position, reason: 'position_gap', detail: `expected position ${this.expected}, found ${position}` };
      return false;
    }
    if (e.prev_hash !== this.prevHash) {
      this.failure = { position, reason: 'prev_hash_mismatch', detail: `prev_hash ${e.prev_hash} does not equal the recomputed hash of position ${position - 1} (${this.prevHash})` };
      return false;
    }
    const state = payloadState(e);
    if (state === 'erased') {
      this.gone.push(position);
      this.goneSet.add(position);
    }
    if (state === 'erased' && Number(e.format ?? 1) !== 3) {
      // Format 1/2: the data was the leaf's; its hash cannot be recomputed any more. Named, and the chain goes on from the stored hash.
      note(this.erased.leaf_not_recomputed, position);
      return this.advance(position, e.event_hash);
    }
    let recomputed: string;
    try {
      recomputed = eventHash({ ...e, position, stream_position: Number(e.stream_position) });
    } catch (err) {
      this.failure = { position, reason: 'bad_format', detail: err instanceof EventFormatError ? err.message : 'the event cannot be serialized' };
      return false;
    }
    if (recomputed !== e.event_hash) {
      this.failure = { position, reason: 'event_hash_mismatch', detail: `stored event_hash ${e.event_hash}, recomputed ${recomputed}: the event was altered` };
      return false;
    }
    if (state === 'erased') {
      note(this.erased.payload_erased, position);
      return this.advance(position, recomputed);
    }
    if (state === 'held' && payloadCommitment(Buffer.from(e.payload_salt as string, 'hex'), e.data) !== e.payload_commitment) {
      this.failure = { position, reason: 'payload_commitment_mismatch', detail: `SHA-256(salt || payload) is not the leaf's payload_commitment ${String(e.payload_commitment)}: the payload or its salt was altered` };
      return false;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(e.data);
    } catch {
      this.failure = { position, reason: 'data_not_json', detail: 'event data is not JSON' };
      return false;
    }
    if (e.type === 'PayloadsErased') {
      const ps = (parsed as { positions?: unknown } | null)?.positions;
      if (Array.isArray(ps)) {
        for (const p of ps) {
          if (typeof p !== 'number') continue;
          this.named.add(p);
          if (p < position && !this.goneSet.has(p)) {
            // Named as erased, yet its payload is held: an erasure undone behind the ledger (a restore from a backup).
            this.failure = { position: p, reason: 'erased_payload_held', detail: `the PayloadsErased event at position ${position} erased the payload of position ${p}, which is held again: restored behind the ledger` };
            return false;
          }
        }
      }
    }
    return this.advance(position, recomputed);
  }

  private advance(position: number, hash: string): boolean {
    this.prevHash = hash;
    this.expected++;
    this.head = { position, event_hash: hash };
    return true;
  }

  /**
   * The report. A payload that is gone without a `PayloadsErased` event
   * naming it (an erasure behind the ledger's back) is a failure,
   * `payload_missing`, at the first such position.
   */
  report(): LedgerChainReport {
    if (this.failure === null) {
      const unnamed = this.gone.find((p) => !this.named.has(p));
      if (unnamed !== undefined) this.failure = { position: unnamed, reason: 'payload_missing', detail: `the payload of position ${unnamed} is gone and no PayloadsErased event names it: it was deleted behind the ledger` };
    }
    return { ok: this.failure === null, checked: this.checked, head: this.head, first_failure: this.failure, erased: this.erased };
  }
}

function note(list: { count: number; positions: number[] }, position: number): void {
  list.count++;
  if (list.positions.length < LISTED_ERASED) list.positions.push(position);
}
