/**
 * What `aer1 log verify-proof` and `aer1 log inclusion` check, without I/O:
 * a proof that one ledger event is a leaf of the verifiable log
 * (RFC 6962 inclusion, c2sp.org/tlog-checkpoint, c2sp.org/tlog-cosignature),
 * and what that leaf is (src/core/ledger/leaf.ts).
 *
 * Two proof file forms are read:
 * - c2sp.org/tlog-proof text (./proof-file.ts) whose `extra`
 *   line carries base64 of the leaf bytes;
 * - our JSON, `{"format":"aer1-log-proof/1","leaf_index","leaf","leaf_hash",
 *   "tree_size","proof":[...],"checkpoint","timestamp"?}` (base64 fields;
 *   `timestamp` a DER RFC 3161 TimeStampResp over the checkpoint body).
 *
 * Every failed check names a code of {@link ProofCheckCode}. Every value
 * shown comes from the file: strings are escaped by the caller before they
 * reach a terminal.
 */
import { decodeStrictBase64, isObject, JsonObject, Verdict } from '../aer1';
import { decodeStrictUtf8, parseJsonText } from '../json';
import { LeafEvent, parseLeaf, receiptOfEvent } from '../ledger/leaf';
import type * as Timestamp from '../timestamp';
import type { TsaReason } from '../timestamp';
import { Checkpoint, verifyCheckpoint } from './checkpoint';
import { Cosignature } from './cosignature';
import { TlogErrorCode } from './errors';
import { leafHash, verifyInclusion } from './merkle';
import { MAX_PROOF_LINES, parseProofFile, PROOF_FILE_HEADER } from './proof-file';
import { failure, quorumCheck, TrustPolicy } from './quorum';
import { checkNostrAnchor, NostrCheckCode } from '../nostr/anchor';

/** RFC 3161 verification (pkijs, asn1js), loaded only when a token is checked. */
const timestampModule = (): Promise<typeof Timestamp> => import('../timestamp');

/** The JSON proof file format name. */
export const JSON_PROOF_FORMAT = 'aer1-log-proof/1';

/** One named check: `ok` null when it could not be evaluated (never counted as passed). */
export interface LogCheck {
  name: LogCheckName;
  ok: boolean | null;
  /** What failed, when it failed. */
  code?: ProofCheckCode;
  detail: string;
}

/**
 * The closed set of codes a failed check names: a TlogError code (signature,
 * cosignature, inclusion, proof file), an RFC 3161 reason (timestamp), or
 * one of the proof's own: `quorum_not_met`, `tree_size_mismatch` (the file's
 * tree_size is not the checkpoint's), `leaf_missing` (no leaf to prove),
 * `leaf_hash_mismatch` (the stated leaf hash is not the leaf's),
 * `leaf_not_event` (the leaf is not a canonical ledger event),
 * `position_mismatch` (its position is not index + 1), `receipt_<verdict>`
 * (the receipt it carries is not valid), `not_this_receipt` and
 * `not_this_record` (the leaf is not the receipt or position the caller
 * asked for: `aer1 log inclusion`, `--expect-*`), and `error` (an exception
 * that is not a TlogError: a defect, never expected).
 */
export type ProofCheckCode =
  | TlogErrorCode
  | TsaReason
  | NostrCheckCode
  | 'quorum_not_met'
  | 'tree_size_mismatch'
  | 'leaf_missing'
  | 'leaf_hash_mismatch'
  | 'leaf_not_event'
  | 'position_mismatch'
  | `receipt_${Exclude<Verdict, 'valid'>}`
  | 'not_this_receipt'
  | 'not_this_record'
  | 'error';

/** The checks, in the order they are made. */
export type LogCheckName =
  | 'proof_file'
  | 'checkpoint_signature'
  | 'cosignatures'
  | 'tree_size'
  | 'leaf_hash'
  | 'inclusion'
  | 'timestamp'
  | 'nostr'
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
  /** The signed NIP-01 event anchoring the checkpoint (JSON form `nostr_event`, optional; issue 33), as parsed. */
  nostrEvent?: unknown;
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
  /** The carried Nostr anchor, when its signature and content checked (`pubkey_checked`: against --nostr-pubkey). */
  nostr: { event_id: string; pubkey: string; created_at: number; pubkey_checked: boolean } | null;
  record: LeafEvent | null;
  receipt: { id: string | null; verdict: string; reasons: string[] } | null;
}

/** Thrown when a file is not a proof file of either form (exit 2, not a failed check). */
export class NotAProofFile extends Error {
  readonly code = 'not_a_proof_file';
}

/** A malformed field of a recognised proof file (a failed `proof_file` check, exit 1). */
class MalformedProof extends Error {}

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
  return { form: 'json', index, leaf, statedLeafHash, statedTreeSize, proof, checkpoint: o.checkpoint, timestamp, nostrEvent: o.nostr_event ?? null };
}

/** A JSON reader: the value, or why the bytes are not JSON in words. */
export type JsonReader = (bytes: Buffer) => { ok: true; value: unknown } | { ok: false; detail: string };

/** Strict UTF-8 and JSON without duplicate members (the CLI passes its reader, which says where the JSON breaks). */
const strictJson: JsonReader = (bytes) => {
  const d = decodeStrictUtf8(bytes);
  if (!d.ok) return { ok: false, detail: d.why === 'not_utf8' ? 'not valid UTF-8' : 'too large to parse' };
  const p = parseJsonText(d.text);
  if (p.ok) return { ok: true, value: p.value };
  return { ok: false, detail: p.why === 'duplicate_member' ? `member ${JSON.stringify(p.member)} appears twice in one object` : 'not valid JSON' };
};

/**
 * Read a proof file's bytes. Returns the parts, or `{malformed}` for a file
 * of a recognised form with a bad field (a failed check); throws
 * {@link NotAProofFile} for anything else. `readJson` parses the JSON form.
 */
export function readProofFile(bytes: Buffer, readJson: JsonReader = strictJson): { parts: ProofParts } | { form: ProofParts['form']; malformed: string } {
  if (bytes.subarray(0, PROOF_FILE_HEADER.length + 1).toString('latin1') === `${PROOF_FILE_HEADER}\n`) {
    try {
      const p = parseProofFile(bytes);
      return { parts: { form: 'tlog-proof', index: p.index, leaf: p.extra, statedLeafHash: null, statedTreeSize: null, proof: [...p.proof], checkpoint: p.checkpoint, timestamp: null } };
    } catch (e) {
      return { form: 'tlog-proof', malformed: e instanceof Error ? e.message : String(e) };
    }
  }
  const parsed = readJson(bytes);
  if (!parsed.ok) throw new NotAProofFile(`neither a ${PROOF_FILE_HEADER} file nor JSON (${parsed.detail})`);
  if (!isObject(parsed.value) || parsed.value.format !== JSON_PROOF_FORMAT) throw new NotAProofFile(`JSON, but not a proof file (no "format": "${JSON_PROOF_FORMAT}")`);
  try {
    return { parts: jsonParts(parsed.value) };
  } catch (e) {
    if (e instanceof MalformedProof) return { form: 'json', malformed: e.message };
    throw e;
  }
}

/** A report for a file whose form is known but a field is malformed. */
export function malformedReport(form: ProofParts['form'], message: string): ProofReport {
  const checks: LogCheck[] = [{ name: 'proof_file', ok: false, code: 'proof_file_malformed', detail: message }];
  return { verified: false, failed: ['proof_file'], checks, form, leaf_index: -1, checkpoint: null, cosignatures: [], timestamp: null, nostr: null, record: null, receipt: null };
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
      const { checkpointTimestampDigest, verifyTimeStampResponse } = await timestampModule();
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
  const nostr = nostrCheck(parts, cp !== null, policy, checks);
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
        ...(ok ? {} : { code: `receipt_${r.result.verdict as Exclude<Verdict, 'valid'>}` }),
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
    nostr,
    record,
    receipt,
  };
}

/**
 * The carried Nostr anchor (issue 33): the event's signature, that its
 * content is this checkpoint (so the inclusion proof joins the leaf to the
 * anchored root) and, with --nostr-pubkey, that it is that publisher's.
 * Without --nostr-pubkey a valid event is shown, not counted as passed.
 */
function nostrCheck(parts: ProofParts, signed: boolean, policy: TrustPolicy, checks: LogCheck[]): ProofReport['nostr'] {
  if (parts.nostrEvent === undefined || parts.nostrEvent === null) return null;
  const r = checkNostrAnchor(parts.nostrEvent, parts.checkpoint, policy.nostrPubkey);
  if (!r.ok) {
    checks.push({ name: 'nostr', ok: false, code: r.code, detail: r.detail });
    return null;
  }
  const what = `Nostr event ${r.event_id} by ${r.pubkey}, created ${new Date(r.created_at * 1000).toISOString()}, carries this checkpoint`;
  if (!signed) checks.push({ name: 'nostr', ok: null, detail: `${what}, but the checkpoint is not signed by the log: the anchor proves nothing here` });
  else if (!r.pubkey_checked) checks.push({ name: 'nostr', ok: null, detail: `${what} (signature valid), but its publisher is NOT checked: give --nostr-pubkey HEX (the ledger's publisher key) to check it` });
  else checks.push({ name: 'nostr', ok: true, detail: `${what}: signature valid (BIP-340), publisher is --nostr-pubkey; the inclusion proof joins the leaf to its root` });
  return { event_id: r.event_id, pubkey: r.pubkey, created_at: r.created_at, pubkey_checked: r.pubkey_checked };
}
