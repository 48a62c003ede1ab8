/**
 * The transport receipt (the implementer's guide's raw MCP `_receipt`) the
 * gateway issues for one `tools/call`, and the S7 chain entry that appends
 * it to a job's timeline.
 */
import { randomUUID } from 'node:crypto';
import { ChainEntry, sha256Hex } from '../../core/aer1';

/** The provenance every gateway receipt declares (S5): the ledger observed the call in its path. */
export const GATEWAY_PROVENANCE = 'OBSERVED VIA GATEWAY';

/**
 * `ok`; `tool_error` (a result with `isError: true`: the tool ran and failed);
 * `jsonrpc_error` (the upstream answered a JSON-RPC error; the bytes are its `error` member).
 */
export type CallStatus = 'ok' | 'tool_error' | 'jsonrpc_error';

/** A transport-form `_receipt`, members in the order the guide lists them. */
export interface GatewayReceipt {
  id: string;
  tool: string;
  timestamp: string;
  tool_context: { gateway: string; job_id: string };
  receipt_schema_version: '0.3';
  provenance_class: typeof GATEWAY_PROVENANCE;
  canonical_bytes: string;
  canonical_byte_length: number;
  hash_algorithm: 'sha256';
  output_hash: string;
  verification_status: 'execution_observed';
  status: CallStatus;
}

/**
 * The receipt over `rawText`: the exact text of the upstream's `result` (or
 * `error`) member as it arrived, committed as its UTF-8 bytes (never
 * parsed and written again). `now` is the time the answer was observed.
 */
export function gatewayReceipt(tool: string, jobId: string, rawText: string, status: CallStatus, now = new Date()): GatewayReceipt {
  const bytes = Buffer.from(rawText, 'utf8');
  return {
    id: randomUUID(),
    tool,
    timestamp: now.toISOString(),
    tool_context: { gateway: 'aer1 gateway', job_id: jobId },
    receipt_schema_version: '0.3',
    provenance_class: GATEWAY_PROVENANCE,
    canonical_bytes: bytes.toString('base64'),
    canonical_byte_length: bytes.length,
    hash_algorithm: 'sha256',
    output_hash: `sha256:${sha256Hex(bytes)}`,
    verification_status: 'execution_observed',
    status,
  };
}

/** The chain entry (S7.2) that records `r` as entry `seq` of `jobId`, linked to `prevDigest` (S7.1), with the call's `status`. */
export function entryFor(r: GatewayReceipt, jobId: string, seq: number, prevDigest: string): ChainEntry & { status: CallStatus } {
  // `status` as OTLP entries carry it: the job page and verifier count an entry whose status is not `ok` as a failed call.
  return { seq, job_id: jobId, id: r.id, tool: r.tool, provenance_class: r.provenance_class, canonical_bytes: r.canonical_bytes, prev_digest: prevDigest, status: r.status };
}
