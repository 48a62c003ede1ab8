/**
 * The ledger's own hash chain: each event stores the previous event's hash
 * and its own hash over a canonical serialization of its content, so any
 * change to a stored event, or a removed or inserted one, is detectable by
 * recomputation. Pure: the service and `aer1 ledger verify` share it.
 */
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
 * without the key) and 2 (the key that wrote the event is hashed with it).
 */
export type EventFormat = 1 | 2;
export const CURRENT_EVENT_FORMAT: EventFormat = 2;

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
  /** The key that wrote the event (format 2); null for format 1. */
  key_id?: string | null;
  key_name?: string | null;
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
 * Throws on an unknown format or a format-2 event without a key.
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
  throw new EventFormatError(`unknown event format ${String(e.format)}`);
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

/** Outcome of recomputing the ledger chain. */
export interface LedgerChainReport {
  ok: boolean;
  checked: number;
  head: { position: number; event_hash: string } | null;
  /** The first position that does not verify, and why. */
  first_failure: { position: number; reason: 'position_gap' | 'prev_hash_mismatch' | 'event_hash_mismatch' | 'data_not_json' | 'bad_format'; detail: string } | null;
}

/**
 * Incremental verifier for the ledger chain: feed events in position order.
 * Checks positions are 1, 2, 3..., each prev_hash equals the previous
 * event's recomputed hash, and each stored event_hash equals the recomputed one.
 */
export class LedgerChainVerifier {
  private prevHash = LEDGER_GENESIS_HASH;
  private expected = 1;
  private checked = 0;
  private failure: LedgerChainReport['first_failure'] = null;
  private head: LedgerChainReport['head'] = null;

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
    try {
      JSON.parse(e.data);
    } catch {
      this.failure = { position, reason: 'data_not_json', detail: 'event data is not JSON' };
      return false;
    }
    this.prevHash = recomputed;
    this.expected++;
    this.head = { position, event_hash: recomputed };
    return true;
  }

  report(): LedgerChainReport {
    return { ok: this.failure === null, checked: this.checked, head: this.head, first_failure: this.failure };
  }
}
