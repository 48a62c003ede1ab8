/**
 * Receipt verification: S3 (record), S4 (canonical bytes and output
 * commitment), S5 (provenance), S6 (procedure), in the two forms of spec
 * README reading 6: the core form and the raw MCP `_receipt` transport form.
 */
import { decodeStrictBase64 } from './base64';
import { isOutputHash, isUuid, provenanceKind, PROVENANCE_MEANING, ProvenanceKind } from './identifiers';
import { describe, Findings, has, isNonEmptyString, isObject, JsonObject, VerificationResultBase } from './result';
import { isRfc3339 } from './rfc3339';
import { sha256Hex } from './sha256';
import { isStrictUtf8 } from './utf8';

/** `core` (S3) or `transport` (the guide's raw MCP `_receipt`). */
export type ReceiptForm = 'core' | 'transport';

/** The result of verifying one receipt. */
export interface ReceiptResult extends VerificationResultBase {
  kind: 'receipt';
  form: ReceiptForm | null;
  /** The receipt id as given (when it is a string). */
  id: string | null;
  /** Provenance class as given, and what it attests (S5); never upgraded. */
  provenance: { class: string | null; kind: ProvenanceKind | null; meaning: string | null };
  /** `wrapped_in` is `jsonrpc` when the receipt was taken from a `tools/call` response's `result._receipt`. */
  wrapped_in: 'jsonrpc' | null;
  computed: {
    /** `sha256:` + hex of the decoded canonical bytes, when they decode. */
    output_hash: string | null;
    canonical_byte_length: number | null;
  };
}

const CORE_LIMITS = [
  'A passing output commitment confirms only that the canonical bytes match output_hash; it does not confirm anything the recording system did not observe (S6 step 5).',
  'The observed result is shown as observed, never as independently true (S13).',
];

/** True when `doc` is a JSON-RPC response whose `result` carries a `_receipt` member (whatever its value). */
export function isJsonRpcReceiptEnvelope(doc: unknown): doc is JsonObject & { result: JsonObject } {
  return isObject(doc) && has(doc, 'jsonrpc') && isObject(doc.result) && has(doc.result, '_receipt');
}

/**
 * The receipt a document carries: a JSON-RPC `tools/call` response's
 * `result._receipt` exactly as returned (even when it is not an object), or
 * the document itself.
 */
export function receiptOfDocument(doc: unknown): unknown {
  return isJsonRpcReceiptEnvelope(doc) ? doc.result._receipt : doc;
}

/** Which form a receipt object is in: a string `tool` or a `timestamp` without `created_at` means transport. */
export function receiptForm(r: JsonObject): ReceiptForm {
  if (typeof r.tool === 'string') return 'transport';
  if (isObject(r.tool)) return 'core';
  return has(r, 'timestamp') && !has(r, 'created_at') ? 'transport' : 'core';
}

/**
 * Verify one receipt (S3, S4, S5, S6 steps 2-4; reading 6).
 *
 * Accepts a core receipt, a transport `_receipt`, or a JSON-RPC `tools/call`
 * response whose `result._receipt` is verified exactly as returned. Never
 * throws: malformed input yields `invalid` with reason codes such as
 * `not_object`, `missing_field:<member>`, `invalid_base64`, `output_hash_mismatch`.
 */
export function verifyReceipt(input: unknown): ReceiptResult {
  const f = new Findings();
  const wrapped = isJsonRpcReceiptEnvelope(input);
  const doc = receiptOfDocument(input);
  const result: ReceiptResult = {
    kind: 'receipt',
    verdict: 'invalid',
    reasons: [],
    checks: f.checks,
    limits: [...CORE_LIMITS],
    form: null,
    id: null,
    provenance: { class: null, kind: null, meaning: null },
    wrapped_in: wrapped ? 'jsonrpc' : null,
    computed: { output_hash: null, canonical_byte_length: null },
  };
  if (!f.check('object', isObject(doc), isObject(doc) ? undefined : 'the receipt is not a JSON object', 'not_object')) {
    return finish(result, f);
  }
  const r = doc as JsonObject;
  const form = receiptForm(r);
  result.form = form;

  /** Record `missing_field:<name>` and return false when the member is absent. */
  const present = (name: string): boolean =>
    f.check(`${name}.present`, has(r, name), has(r, name) ? undefined : `required member ${name} is absent`, `missing_field:${name}`);

  // id (S3): a UUID.
  if (present('id')) {
    if (typeof r.id === 'string') result.id = r.id;
    f.check('id', isUuid(r.id), isUuid(r.id) ? undefined : `not a UUID: ${describe(r.id)}`, 'invalid_id');
  }

  if (form === 'core') {
    if (present('receipt_schema_version')) {
      const ok = r.receipt_schema_version === '0.3';
      f.check('receipt_schema_version', ok, ok ? undefined : `expected "0.3", got ${describe(r.receipt_schema_version)}`, 'unsupported_schema_version');
    }
    if (present('created_at')) {
      const ok = isRfc3339(r.created_at);
      f.check('created_at', ok, ok ? undefined : `not an RFC 3339 date-time with a real date: ${describe(r.created_at)}`, 'invalid_timestamp');
    }
    if (present('tool')) {
      const t = r.tool;
      const ok = isObject(t) && isNonEmptyString(t.name) && isNonEmptyString(t.version) && isNonEmptyString(t.scope);
      f.check('tool', ok, ok ? undefined : 'tool must be an object with non-empty string name, version and scope', 'invalid_tool');
    }
  } else {
    if (present('tool')) {
      const ok = isNonEmptyString(r.tool);
      f.check('tool', ok, ok ? undefined : 'transport tool must be a non-empty string', 'invalid_tool');
    }
    if (present('timestamp')) {
      const ok = isRfc3339(r.timestamp);
      f.check('timestamp', ok, ok ? undefined : `not an RFC 3339 date-time with a real date: ${describe(r.timestamp)}`, 'invalid_timestamp');
    }
    if (has(r, 'tool_context')) {
      const ok = isObject(r.tool_context);
      f.check('tool_context', ok, ok ? undefined : 'tool_context, when present, must be an object', 'invalid_field:tool_context');
    }
    if (has(r, 'receipt_schema_version')) {
      const ok = r.receipt_schema_version === '0.3';
      f.check('receipt_schema_version', ok, ok ? undefined : `expected "0.3", got ${describe(r.receipt_schema_version)}`, 'unsupported_schema_version');
    }
    if (has(r, 'hash_algorithm')) {
      const ok = r.hash_algorithm === 'sha256';
      f.check('hash_algorithm', ok, ok ? undefined : `only sha256 is supported, got ${describe(r.hash_algorithm)}`, 'unsupported_hash_algorithm');
    }
    if (present('status')) {
      const ok = isNonEmptyString(r.status);
      f.check('status', ok, ok ? `execution status ${r.status} (kept as sent)` : 'status must be a non-empty string', 'invalid_status');
    }
  }

  // Provenance (S5): exactly one class, shown beside every field.
  if (present('provenance_class')) {
    const kind = provenanceKind(r.provenance_class);
    result.provenance = {
      class: typeof r.provenance_class === 'string' ? r.provenance_class : null,
      kind,
      meaning: kind ? PROVENANCE_MEANING[kind] : null,
    };
    f.check('provenance_class', kind !== null, kind ? undefined : `unknown provenance class: ${describe(r.provenance_class)}`, 'unknown_provenance_class');
  }

  // Canonical bytes and output commitment (S4, S6 steps 2-3).
  let bytes: Buffer | null = null;
  if (present('canonical_bytes')) {
    bytes = decodeStrictBase64(r.canonical_bytes);
    f.check('canonical_bytes.base64', bytes !== null, bytes ? `${bytes.length} bytes` : 'not strict base64 (RFC 4648, padded, canonical, no white space)', 'invalid_base64');
    if (bytes) {
      result.computed.canonical_byte_length = bytes.length;
      result.computed.output_hash = 'sha256:' + sha256Hex(bytes);
      const utf8 = isStrictUtf8(bytes);
      f.check('canonical_bytes.utf8', utf8, utf8 ? undefined : 'the decoded bytes are not strict UTF-8', 'invalid_utf8');
    }
  }
  if (form === 'transport' && has(r, 'canonical_byte_length')) {
    const n = r.canonical_byte_length;
    if (!Number.isSafeInteger(n) || (n as number) < 0) {
      f.check('canonical_byte_length', false, `not a non-negative integer: ${describe(n)}`, 'invalid_field:canonical_byte_length');
    } else if (bytes) {
      const ok = n === bytes.length;
      f.check('canonical_byte_length', ok, ok ? undefined : `declared ${n}, decoded ${bytes.length}`, 'canonical_byte_length_mismatch');
    } else {
      f.check('canonical_byte_length', null, 'not evaluated: canonical bytes did not decode');
    }
  }
  if (present('output_hash')) {
    const fmt = isOutputHash(r.output_hash);
    f.check('output_hash.format', fmt, fmt ? undefined : `not "sha256:" plus 64 lowercase hex: ${describe(r.output_hash)}`, 'invalid_output_hash_format');
    if (fmt && result.computed.output_hash) {
      const ok = r.output_hash === result.computed.output_hash;
      f.check('output_commitment', ok, ok ? `recomputed ${result.computed.output_hash}` : `declared ${r.output_hash as string}, recomputed ${result.computed.output_hash}`, 'output_hash_mismatch');
    } else {
      f.check('output_commitment', null, 'not confirmed: the canonical bytes or the declared hash are unusable (S4)');
    }
  }

  if (present('verification_status')) {
    if (form === 'core') {
      const ok = r.verification_status === 'verified';
      f.check('verification_status', ok, ok ? undefined : `core receipts carry "verified", got ${describe(r.verification_status)}`, 'invalid_verification_status');
    } else {
      const ok = isNonEmptyString(r.verification_status);
      f.check('verification_status', ok, ok ? `transport status ${r.verification_status} (kept as sent, not rewritten)` : 'must be a non-empty string', 'invalid_verification_status');
    }
  }
  return finish(result, f);
}

function finish(result: ReceiptResult, f: Findings): ReceiptResult {
  result.reasons = f.reasons;
  result.verdict = f.verdict();
  return result;
}
