/**
 * The ledger's own hash chain: each event stores the previous event's hash
 * and its own hash over a canonical serialization of its content, so any
 * change to a stored event, or a removed or inserted one, is detectable by
 * recomputation. Pure: the service and `aer1 ledger verify` share it.
 */
import { sha256Hex, writeJsonString, ZERO_DIGEST } from '../aer1';

/** The hash that precedes the first event. */
export const LEDGER_GENESIS_HASH = ZERO_DIGEST;

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
}

/**
 * The canonical serialization of an event's content: a JSON array
 * `["aer1-ledger-event/1", position, prev_hash, recorded_at, stream_id,
 * stream_position, type, data]` with ASCII-only string escaping (the S7.1
 * writer) and `data` as a string, so it is hashed exactly as stored.
 */
export function eventHashInput(e: Omit<StoredEvent, 'event_hash'>): string {
  return (
    '["aer1-ledger-event/1",' + String(e.position) + ',' + writeJsonString(e.prev_hash) + ',' +
    writeJsonString(e.recorded_at) + ',' + writeJsonString(e.stream_id) + ',' + String(e.stream_position) + ',' +
    writeJsonString(e.type) + ',' + writeJsonString(e.data) + ']'
  );
}

/** SHA-256 of {@link eventHashInput}, lowercase hex. */
export function eventHash(e: Omit<StoredEvent, 'event_hash'>): string {
  return sha256Hex(eventHashInput(e));
}

/** Outcome of recomputing the ledger chain. */
export interface LedgerChainReport {
  ok: boolean;
  checked: number;
  head: { position: number; event_hash: string } | null;
  /** The first position that does not verify, and why. */
  first_failure: { position: number; reason: 'position_gap' | 'prev_hash_mismatch' | 'event_hash_mismatch' | 'data_not_json'; detail: string } | null;
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
    const recomputed = eventHash({ ...e, position, stream_position: Number(e.stream_position) });
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
