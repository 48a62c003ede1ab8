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
import { eventHashInput, StoredEvent } from './event-hash';

/** The ledger event a leaf holds. */
export interface LeafEvent {
  format: 1 | 2;
  position: number;
  prev_hash: string;
  recorded_at: string;
  stream_id: string;
  stream_position: number;
  type: string;
  key_id: string | null;
  key_name: string | null;
  /** The event data as JSON text, exactly as hashed. */
  data: string;
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
  const format = a[0] === 'aer1-ledger-event/2' && a.length === 10 ? 2 : a[0] === 'aer1-ledger-event/1' && a.length === 8 ? 1 : null;
  if (format === null) throw new LeafError('leaf_format_unknown', 'the leaf is not an aer1-ledger-event/1 or /2 array');
  const [, position, prev_hash, recorded_at, stream_id, stream_position, type] = a as unknown[];
  const key_id = format === 2 ? a[7] : null;
  const key_name = format === 2 ? a[8] : null;
  const data = a[a.length - 1] as unknown;
  const ints = [position, stream_position].every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1);
  const strings = [prev_hash, recorded_at, stream_id, type, data].every((s) => typeof s === 'string') && (format === 1 || (typeof key_id === 'string' && typeof key_name === 'string'));
  if (!ints || !strings) throw new LeafError('leaf_field_type', 'the leaf holds a field of the wrong type');
  const e = { format, position, prev_hash, recorded_at, stream_id, stream_position, type, key_id, key_name, data } as LeafEvent;
  const stored: Omit<StoredEvent, 'event_hash'> = { ...e };
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
  if (e.type !== 'ReceiptRecorded') return null;
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
