/**
 * What a log leaf is: the inverse of {@link eventHashInput}.
 *
 * The log's leaves (issue 14, "The log"): leaf index = event position - 1;
 * the leaf is the UTF-8 of `eventHashInput(event)` (./event-hash.ts),
 * leaf hash = SHA-256(0x00 || leaf). A leaf is read back only when it is
 * written canonically (re-serializing what it holds gives the same bytes).
 */
import { isObject, ReceiptResult, verifyReceipt } from '../aer1';
import { decodeStrictUtf8, parseJsonText } from '../json';
import { eventHashInput, PAYLOAD_COMMITMENT, payloadCommitment, PublicIdValue, publicIdsText, StoredEvent } from './event-hash';

/** The ledger event a leaf holds. */
export interface LeafEvent {
  format: 1 | 2 | 3;
  position: number;
  prev_hash: string;
  recorded_at: string;
  stream_id: string;
  stream_position: number;
  type: string;
  key_id: string | null;
  key_name: string | null;
  /** Formats 1 and 2: the event data as JSON text, exactly as hashed. Format 3: null (the leaf holds no content; see {@link withPayload}). */
  data: string | null;
  /** Format 3: the position of the previous event of the same stream (0 for its first); null before. */
  stream_prev: number | null;
  /** Format 3: the record's public identifiers; null before. */
  ids: Record<string, PublicIdValue> | null;
  /** Format 3: `sha256:` + hex SHA-256(salt || payload); null before. */
  payload_commitment: string | null;
}

/** Why a payload does not belong to a format 3 leaf. */
export type PayloadErrorCode = 'payload_not_format_3' | 'payload_salt_invalid' | 'payload_commitment_mismatch';

/**
 * The format 3 event `e` with its payload (the exact bytes of its data) and
 * salt (32 bytes), once SHA-256(salt || payload) is checked against the
 * leaf's `payload_commitment`: `{ ok: true, event }` with `data` set to the
 * payload's text, or `{ ok: false, code }` saying why not.
 */
export function withPayload(e: LeafEvent, payload: Buffer, salt: Buffer): { ok: true; event: LeafEvent } | { ok: false; code: PayloadErrorCode; message: string } {
  if (e.format !== 3 || e.payload_commitment === null) return { ok: false, code: 'payload_not_format_3', message: 'only a format 3 leaf commits to a payload' };
  if (salt.length !== 32) return { ok: false, code: 'payload_salt_invalid', message: 'the salt is not 32 bytes' };
  const c = payloadCommitment(salt, payload);
  if (c !== e.payload_commitment) return { ok: false, code: 'payload_commitment_mismatch', message: `SHA-256(salt || payload) is ${c}, the leaf commits to ${e.payload_commitment}` };
  const d = decodeStrictUtf8(payload);
  if (!d.ok) return { ok: false, code: 'payload_commitment_mismatch', message: 'the payload matches its commitment but is not UTF-8' };
  return { ok: true, event: { ...e, data: d.text } };
}

/** Why bytes are not a ledger event leaf. */
export type LeafErrorCode = 'leaf_not_utf8' | 'leaf_not_json' | 'leaf_not_array' | 'leaf_format_unknown' | 'leaf_field_type' | 'leaf_not_canonical';

/** A leaf that is not a canonical ledger event: `code` is fixed, `message` says it in words. */
export class LeafError extends Error {
  constructor(
    readonly code: LeafErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'LeafError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parse a leaf as a ledger event (format 1 or 2) and check it is written
 * canonically: `eventHashInput` of what it holds gives back the same bytes.
 * @throws LeafError saying what is wrong (never another exception for any bytes).
 */
export function parseLeaf(leaf: Uint8Array): LeafEvent {
  let text: string;
  try {
    text = utf8.decode(leaf);
  } catch {
    throw new LeafError('leaf_not_utf8', 'the leaf is not UTF-8');
  }
  let a: unknown;
  try {
    a = JSON.parse(text);
  } catch {
    throw new LeafError('leaf_not_json', 'the leaf is not JSON');
  }
  if (!Array.isArray(a)) throw new LeafError('leaf_not_array', 'the leaf is not a JSON array');
  if (a[0] === 'aer1-ledger-event/3' && a.length === 12) return parseFormat3(a, text);
  const format = a[0] === 'aer1-ledger-event/2' && a.length === 10 ? 2 : a[0] === 'aer1-ledger-event/1' && a.length === 8 ? 1 : null;
  if (format === null) throw new LeafError('leaf_format_unknown', 'the leaf is not an aer1-ledger-event/1, /2 or /3 array');
  const [, position, prev_hash, recorded_at, stream_id, stream_position, type] = a as unknown[];
  const key_id = format === 2 ? a[7] : null;
  const key_name = format === 2 ? a[8] : null;
  const data = a[a.length - 1] as unknown;
  const ints = [position, stream_position].every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1);
  const strings = [prev_hash, recorded_at, stream_id, type, data].every((s) => typeof s === 'string') && (format === 1 || (typeof key_id === 'string' && typeof key_name === 'string'));
  if (!ints || !strings) throw new LeafError('leaf_field_type', 'the leaf holds a field of the wrong type');
  const e = { format, position, prev_hash, recorded_at, stream_id, stream_position, type, key_id, key_name, data, stream_prev: null, ids: null, payload_commitment: null } as LeafEvent;
  const stored: Omit<StoredEvent, 'event_hash'> = { ...e, data: data as string };
  if (eventHashInput(stored) !== text) throw new LeafError('leaf_not_canonical', 'the leaf is not the canonical serialization of the event it holds');
  return e;
}

/** `["aer1-ledger-event/3", position, prev_hash, recorded_at, stream_id, stream_position, stream_prev, type, key_id, key_name, {ids}, payload_commitment]`, checked canonical. */
function parseFormat3(a: unknown[], text: string): LeafEvent {
  const [, position, prev_hash, recorded_at, stream_id, stream_position, stream_prev, type, key_id, key_name, ids, commitment] = a;
  const ints = [position, stream_position].every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1) && typeof stream_prev === 'number' && Number.isSafeInteger(stream_prev) && stream_prev >= 0;
  const strings = [prev_hash, recorded_at, stream_id, type, key_id, key_name, commitment].every((s) => typeof s === 'string');
  const idsOk =
    typeof ids === 'object' && ids !== null && !Array.isArray(ids) && Object.values(ids).every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0));
  if (!ints || !strings || !idsOk || !PAYLOAD_COMMITMENT.test(commitment as string)) throw new LeafError('leaf_field_type', 'the leaf holds a field of the wrong type');
  const pub = ids as Record<string, PublicIdValue>;
  const e: LeafEvent = {
    format: 3,
    position: position as number,
    prev_hash: prev_hash as string,
    recorded_at: recorded_at as string,
    stream_id: stream_id as string,
    stream_position: stream_position as number,
    type: type as string,
    key_id: key_id as string,
    key_name: key_name as string,
    data: null,
    stream_prev: stream_prev as number,
    ids: pub,
    payload_commitment: commitment as string,
  };
  const stored: Omit<StoredEvent, 'event_hash'> = { ...e, data: '', format: 3, public_ids: publicIdsText(pub) };
  if ((stream_prev as number) >= (position as number)) throw new LeafError('leaf_field_type', 'stream_prev is not before the event');
  if (eventHashInput(stored) !== text) throw new LeafError('leaf_not_canonical', 'the leaf is not the canonical serialization of the event it holds');
  return e;
}

/** JSON of UTF-8 bytes (strict UTF-8, no duplicate members), or undefined. */
function jsonOf(bytes: Buffer): unknown {
  const d = decodeStrictUtf8(bytes);
  if (!d.ok) return undefined;
  const p = parseJsonText(d.text);
  return p.ok ? p.value : undefined;
}

/** The AER-1 verdict of the receipt a `ReceiptRecorded` event carries (its `raw` bytes, verified with the core); null for other events. */
export function receiptOfEvent(e: LeafEvent): { id: string | null; result: ReceiptResult } | null {
  if (e.type !== 'ReceiptRecorded' || e.data === null) return null;
  let data: unknown;
  try {
    data = JSON.parse(e.data);
  } catch {
    data = undefined;
  }
  const id = isObject(data) && typeof data.id === 'string' ? data.id : null;
  const raw = isObject(data) && typeof data.raw === 'string' ? data.raw : null;
  const doc = raw === null ? undefined : jsonOf(Buffer.from(raw, 'utf8'));
  return { id, result: verifyReceipt(doc) };
}
