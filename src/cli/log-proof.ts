/**
 * What `aer1 log verify-proof` and `aer1 log inclusion` check, without I/O:
 * a proof that one ledger event is a leaf of the verifiable log
 * (RFC 6962 inclusion, c2sp.org/tlog-checkpoint, c2sp.org/tlog-cosignature),
 * and what that leaf is.
 *
 * The log's leaves (issue 14, "The log"): leaf index = event position - 1;
 * the leaf is the UTF-8 of `eventHashInput(event)` (src/core/ledger/event-hash.ts),
 * leaf hash = SHA-256(0x00 || leaf).
 *
 * Two proof file forms are read:
 * - c2sp.org/tlog-proof text (src/core/tlog/proof-file.ts) whose `extra`
 *   line carries base64 of the leaf bytes;
 * - our JSON, `{"format":"aer1-log-proof/1","leaf_index","leaf","leaf_hash",
 *   "tree_size","proof":[...],"checkpoint","timestamp"?}` (base64 fields;
 *   `timestamp` a DER RFC 3161 TimeStampResp over the checkpoint body).
 *
 * Every value shown comes from the file: strings are escaped by the caller
 * (report.ts `safe`) before they reach a terminal.
 */
import { JsonObject, isObject, ReceiptResult, verifyReceipt, decodeStrictBase64 } from '../core/aer1';
import { eventHashInput, StoredEvent } from '../core/ledger/event-hash';
import { Checkpoint, Cosignature, isTlogError, leafHash, MAX_PROOF_LINES, NoteVerifier, parseProofFile, PROOF_FILE_HEADER, verifyCheckpoint, verifyCosignatures, verifyInclusion } from '../core/tlog';
import type * as Rfc3161 from '../timestamp/rfc3161';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const rfc3161 = (): Promise<typeof Rfc3161> => import('../timestamp/rfc3161');
import { parseJsonBytes } from './input';

/** The JSON proof file format name. */
export const JSON_PROOF_FORMAT = 'aer1-log-proof/1';

/** One named check: `ok` null when it could not be evaluated (never counted as passed). */
export interface LogCheck {
  name: LogCheckName;
  ok: boolean | null;
  /** The TlogError (or other) code when it failed. */
  code?: string;
  detail: string;
}

/** The checks, in the order they are made. */
export type LogCheckName =
  | 'proof_file'
  | 'checkpoint_signature'
  | 'cosignatures'
  | 'tree_size'
  | 'leaf_hash'
  | 'inclusion'
  | 'timestamp'
  | 'leaf_record'
  | 'receipt'
  | 'leaf_is_receipt'
  | 'leaf_is_record';

/** The parts of a proof, whichever form it came in. */
export interface ProofParts {
  /** `fetched`: parts fetched from the log's proof endpoints by `aer1 log inclusion` (no file). */
  form: 'tlog-proof' | 'json' | 'fetched';
  index: number;
  /** The leaf bytes (null: a tlog-proof without `extra`). */
  leaf: Buffer | null;
  /** The leaf hash the file (or server) states, when it states one. */
  statedLeafHash: Buffer | null;
  /** The tree size the file states besides the checkpoint's (JSON form). */
  statedTreeSize: number | null;
  proof: Buffer[];
  /** The checkpoint signed note, verbatim. */
  checkpoint: string;
  /** DER RFC 3161 TimeStampResp or token (JSON form, optional). */
  timestamp: Buffer | null;
}

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

/** Who must have signed and cosigned. */
export interface TrustPolicy {
  /** The log's key (type 0x01); its name is the log origin. */
  log: NoteVerifier;
  /** Witness keys (type 0x04). */
  witnesses: readonly NoteVerifier[];
  /** Valid cosignatures needed (0 without witnesses). */
  quorum: number;
  /** PEM of the TSA chain, to check a carried RFC 3161 token. */
  tsaCertsPem?: string;
  /** Keys trusted for endpoint commitments (`--trusted-key`, the server's TRUSTED_COMMITMENT_KEYS), to judge attested ones. */
  commitmentKeys?: readonly NoteVerifier[];
}

/** Everything found. */
export interface ProofReport {
  verified: boolean;
  /** Names of the checks that failed. */
  failed: LogCheckName[];
  checks: LogCheck[];
  form: ProofParts['form'];
  leaf_index: number;
  checkpoint: { origin: string; size: number; root: string } | null;
  cosignatures: { name: string; key_id: string; timestamp: number }[];
  timestamp: { gen_time: string; tsa: string } | null;
  record: LeafEvent | null;
  receipt: { id: string | null; verdict: string; reasons: string[] } | null;
}

/** Thrown when a file is not a proof file of either form (exit 2, not a failed check). */
export class NotAProofFile extends Error {}

/** A malformed field of a recognised proof file (a failed `proof_file` check, exit 1). */
class MalformedProof extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function hash32(v: unknown, what: string): Buffer {
  const b = decodeStrictBase64(v);
  if (b === null || b.length !== 32) throw new MalformedProof(`${what} is not base64 of a 32-byte hash`);
  return b;
}

function count(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new MalformedProof(`${what} is not a non-negative integer`);
  return v;
}

/** The JSON form's fields, checked strictly. */
function jsonParts(o: JsonObject): ProofParts {
  const index = count(o.leaf_index, 'leaf_index');
  const leaf = decodeStrictBase64(o.leaf);
  if (leaf === null || leaf.length === 0) throw new MalformedProof('leaf is not non-empty base64');
  const statedLeafHash = hash32(o.leaf_hash, 'leaf_hash');
  const statedTreeSize = count(o.tree_size, 'tree_size');
  if (!Array.isArray(o.proof) || o.proof.length > MAX_PROOF_LINES) throw new MalformedProof(`proof is not an array of at most ${MAX_PROOF_LINES} hashes`);
  const proof = o.proof.map((h, i) => hash32(h, `proof[${i}]`));
  if (typeof o.checkpoint !== 'string' || o.checkpoint.length === 0) throw new MalformedProof('checkpoint is not the signed note text');
  let timestamp: Buffer | null = null;
  if (o.timestamp !== undefined && o.timestamp !== null) {
    timestamp = decodeStrictBase64(o.timestamp);
    if (timestamp === null || timestamp.length === 0) throw new MalformedProof('timestamp is not non-empty base64');
  }
  return { form: 'json', index, leaf, statedLeafHash, statedTreeSize, proof, checkpoint: o.checkpoint, timestamp };
}

/**
 * Read a proof file's bytes. Returns the parts, or `{malformed}` for a file
 * of a recognised form with a bad field (a failed check); throws
 * {@link NotAProofFile} for anything else.
 */
export function readProofFile(bytes: Buffer): { parts: ProofParts } | { form: ProofParts['form']; malformed: string } {
  if (bytes.subarray(0, PROOF_FILE_HEADER.length + 1).toString('latin1') === `${PROOF_FILE_HEADER}\n`) {
    try {
      const p = parseProofFile(bytes);
      return { parts: { form: 'tlog-proof', index: p.index, leaf: p.extra, statedLeafHash: null, statedTreeSize: null, proof: [...p.proof], checkpoint: p.checkpoint, timestamp: null } };
    } catch (e) {
      return { form: 'tlog-proof', malformed: e instanceof Error ? e.message : String(e) };
    }
  }
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) throw new NotAProofFile(`neither a ${PROOF_FILE_HEADER} file nor JSON (${parsed.detail})`);
  if (!isObject(parsed.value) || parsed.value.format !== JSON_PROOF_FORMAT) throw new NotAProofFile(`JSON, but not a proof file (no "format": "${JSON_PROOF_FORMAT}")`);
  try {
    return { parts: jsonParts(parsed.value) };
  } catch (e) {
    if (e instanceof MalformedProof) return { form: 'json', malformed: e.message };
    throw e;
  }
}

/**
 * Parse a leaf as a ledger event (format 1 or 2) and check it is written
 * canonically: `eventHashInput` of what it holds gives back the same bytes.
 * Throws an Error saying what is wrong.
 */
export function parseLeaf(leaf: Buffer): LeafEvent {
  let text: string;
  try {
    text = utf8.decode(leaf);
  } catch {
    throw new Error('the leaf is not UTF-8');
  }
  let a: unknown;
  try {
    a = JSON.parse(text);
  } catch {
    throw new Error('the leaf is not JSON');
  }
  if (!Array.isArray(a)) throw new Error('the leaf is not a JSON array');
  const format = a[0] === 'aer1-ledger-event/2' && a.length === 10 ? 2 : a[0] === 'aer1-ledger-event/1' && a.length === 8 ? 1 : null;
  if (format === null) throw new Error('the leaf is not an aer1-ledger-event/1 or /2 array');
  const [, position, prev_hash, recorded_at, stream_id, stream_position, type] = a as unknown[];
  const key_id = format === 2 ? a[7] : null;
  const key_name = format === 2 ? a[8] : null;
  const data = a[a.length - 1] as unknown;
  const ints = [position, stream_position].every((n) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1);
  const strings = [prev_hash, recorded_at, stream_id, type, data].every((s) => typeof s === 'string') && (format === 1 || (typeof key_id === 'string' && typeof key_name === 'string'));
  if (!ints || !strings) throw new Error('the leaf holds a field of the wrong type');
  const e = { format, position, prev_hash, recorded_at, stream_id, stream_position, type, key_id, key_name, data } as LeafEvent;
  const stored: Omit<StoredEvent, 'event_hash'> = { ...e };
  if (eventHashInput(stored) !== text) throw new Error('the leaf is not the canonical serialization of the event it holds');
  return e;
}

/** The AER-1 verdict of the receipt a `ReceiptRecorded` event carries (its `raw` bytes, verified with the core). */
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
  let doc: unknown = undefined;
  if (raw !== null) {
    const p = parseJsonBytes(Buffer.from(raw, 'utf8'));
    doc = p.ok ? p.value : undefined;
  }
  return { id, result: verifyReceipt(doc) };
}

function failure(e: unknown): { code: string; message: string } {
  if (isTlogError(e)) return { code: e.code, message: e.message };
  return { code: 'error', message: e instanceof Error ? e.message : String(e) };
}

/** Cosignatures by `witnesses` on `note` against the quorum (a check, and the valid ones). */
export function quorumCheck(note: string, policy: TrustPolicy): { check: LogCheck; valid: Cosignature[] } {
  const n = policy.witnesses.length;
  try {
    const { cosignatures } = verifyCosignatures(note, policy.witnesses);
    const names = cosignatures.map((c) => `${c.name} at ${new Date(c.timestamp * 1000).toISOString()}`).join(', ');
    const ok = cosignatures.length >= policy.quorum;
    return {
      check: { name: 'cosignatures', ok, ...(ok ? {} : { code: 'quorum_not_met' }), detail: `${cosignatures.length} of ${n} witness${n === 1 ? '' : 'es'} cosigned, ${policy.quorum} needed${names ? `: ${names}` : ''}` },
      valid: cosignatures,
    };
  } catch (e) {
    const f = failure(e);
    return { check: { name: 'cosignatures', ok: false, code: f.code, detail: f.message }, valid: [] };
  }
}

/** A report for a file whose form is known but a field is malformed. */
export function malformedReport(form: ProofParts['form'], message: string): ProofReport {
  const checks: LogCheck[] = [{ name: 'proof_file', ok: false, code: 'proof_file_malformed', detail: message }];
  return { verified: false, failed: ['proof_file'], checks, form, leaf_index: -1, checkpoint: null, cosignatures: [], timestamp: null, record: null, receipt: null };
}

/**
 * Check a proof in the order of tlog-proof "Verifying a tlog proof": the
 * checkpoint's log signature (origin = the log key's name), the witness
 * quorum, the stated tree size, the leaf hash (computed from the leaf, and
 * equal to the one stated), the inclusion proof against the signed root,
 * the carried timestamp (only with a TSA chain), then what the leaf is (a
 * canonical ledger event at position index + 1) and, for a receipt, its
 * AER-1 verdict (must be valid). Verified only when no check failed and
 * the signature, inclusion and leaf checks passed.
 */
export async function checkProof(parts: ProofParts, policy: TrustPolicy): Promise<ProofReport> {
  const checks: LogCheck[] = [];
  if (parts.form !== 'fetched') checks.push({ name: 'proof_file', ok: true, detail: `${parts.form === 'json' ? JSON_PROOF_FORMAT : PROOF_FILE_HEADER}, leaf index ${parts.index}, ${parts.proof.length} proof hash${parts.proof.length === 1 ? '' : 'es'}` });
  let cp: Checkpoint | null = null;
  try {
    cp = verifyCheckpoint(parts.checkpoint, [policy.log], policy.log.name).checkpoint;
    checks.push({ name: 'checkpoint_signature', ok: true, detail: `signed by ${policy.log.name} (key ${policy.log.vkey.split('+')[1]}): size ${cp.size}, root ${cp.rootHash.toString('base64')}` });
  } catch (e) {
    const f = failure(e);
    checks.push({ name: 'checkpoint_signature', ok: false, code: f.code, detail: f.message });
  }
  let cosignatures: Cosignature[] = [];
  if (policy.witnesses.length > 0) {
    const q = quorumCheck(parts.checkpoint, policy);
    checks.push(q.check);
    cosignatures = q.valid;
  }
  if (parts.statedTreeSize !== null && cp !== null) {
    const ok = parts.statedTreeSize === cp.size;
    checks.push({ name: 'tree_size', ok, ...(ok ? {} : { code: 'tree_size_mismatch' }), detail: ok ? `tree_size ${cp.size} is the checkpoint's` : `tree_size ${parts.statedTreeSize} is not the checkpoint's size ${cp.size}` });
  }
  let computed: Buffer | null = null;
  if (parts.leaf === null) {
    checks.push({ name: 'leaf_hash', ok: false, code: 'leaf_missing', detail: 'the file carries no leaf (no extra line): there is nothing to prove the inclusion of' });
  } else {
    computed = leafHash(parts.leaf);
    if (parts.statedLeafHash !== null && !parts.statedLeafHash.equals(computed)) {
      checks.push({ name: 'leaf_hash', ok: false, code: 'leaf_hash_mismatch', detail: `SHA-256(0x00 || leaf) is ${computed.toString('base64')}, the file states ${parts.statedLeafHash.toString('base64')}` });
    } else {
      checks.push({ name: 'leaf_hash', ok: true, detail: `SHA-256(0x00 || leaf) = ${computed.toString('base64')}` });
    }
  }
  if (cp === null) {
    checks.push({ name: 'inclusion', ok: null, detail: 'not checked: the checkpoint is not signed by the log, so its root proves nothing' });
  } else if (computed === null) {
    checks.push({ name: 'inclusion', ok: null, detail: 'not checked: no leaf' });
  } else {
    try {
      verifyInclusion(parts.index, cp.size, computed, parts.proof, cp.rootHash);
      checks.push({ name: 'inclusion', ok: true, detail: `leaf ${parts.index} is in the tree of size ${cp.size} (RFC 6962 inclusion proof verified against the signed root)` });
    } catch (e) {
      const f = failure(e);
      checks.push({ name: 'inclusion', ok: false, code: f.code, detail: f.message });
    }
  }
  let timestamp: ProofReport['timestamp'] = null;
  if (parts.timestamp !== null) {
    if (policy.tsaCertsPem === undefined) {
      checks.push({ name: 'timestamp', ok: null, detail: 'an RFC 3161 token is carried but NOT checked: give --tsa-certs PEM (the TSA chain) to check it' });
    } else {
      const { checkpointTimestampDigest, verifyTimeStampResponse } = await rfc3161();
      let digest: Buffer | null = null;
      try {
        digest = checkpointTimestampDigest(parts.checkpoint);
      } catch {
        digest = null;
      }
      const r = digest === null ? null : await verifyTimeStampResponse(parts.timestamp, digest, { certsPem: policy.tsaCertsPem });
      if (r === null) checks.push({ name: 'timestamp', ok: false, code: 'checkpoint_malformed', detail: 'the checkpoint has no body to timestamp' });
      else if (r.ok) {
        timestamp = { gen_time: r.genTime, tsa: r.tsaName };
        checks.push({ name: 'timestamp', ok: true, detail: `the checkpoint existed at ${r.genTime}, per ${r.tsaName} (RFC 3161)` });
      } else checks.push({ name: 'timestamp', ok: false, code: r.code, detail: r.message });
    }
  }
  let record: LeafEvent | null = null;
  let receipt: ProofReport['receipt'] = null;
  if (parts.leaf !== null) {
    try {
      record = parseLeaf(parts.leaf);
      const ok = record.position === parts.index + 1;
      checks.push({
        name: 'leaf_record',
        ok,
        ...(ok ? {} : { code: 'position_mismatch' }),
        detail: ok ? `ledger event (format ${record.format}) at position ${record.position} = leaf index + 1` : `the event's position ${record.position} is not leaf index ${parts.index} + 1`,
      });
    } catch (e) {
      checks.push({ name: 'leaf_record', ok: false, code: 'leaf_not_event', detail: (e as Error).message });
    }
  }
  if (record !== null) {
    const r = receiptOfEvent(record);
    if (r !== null) {
      receipt = { id: r.id, verdict: r.result.verdict, reasons: [...r.result.reasons] };
      const ok = r.result.verdict === 'valid';
      checks.push({
        name: 'receipt',
        ok,
        ...(ok ? {} : { code: `receipt_${r.result.verdict}` }),
        detail: `receipt ${r.id ?? '(no id)'}: AER-1 verdict ${r.result.verdict}${r.result.reasons.length ? ` (${r.result.reasons.join(', ')})` : ''}`,
      });
    }
  }
  const failed = checks.filter((c) => c.ok === false).map((c) => c.name);
  const passed = (n: LogCheckName): boolean => checks.some((c) => c.name === n && c.ok === true);
  const verified = failed.length === 0 && passed('checkpoint_signature') && passed('inclusion') && passed('leaf_record');
  return {
    verified,
    failed,
    checks,
    form: parts.form,
    leaf_index: parts.index,
    checkpoint: cp ? { origin: cp.origin, size: cp.size, root: cp.rootHash.toString('base64') } : null,
    cosignatures: cosignatures.map((c) => ({ name: c.name, key_id: c.keyId.toString(16).padStart(8, '0'), timestamp: c.timestamp })),
    timestamp,
    record,
    receipt,
  };
}
