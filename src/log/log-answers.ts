/** The shapes of the verifiable log's answers (leaves, a record's location), who may read a leaf's bytes, and its query limits. */
import { BadInputError } from '../common/errors';
import type { Principal } from '../auth/api-keys.service';
import { mayReadWithheld } from '../auth/permissions';

/** How often {@link LogService.latestCovering} reads the newest checkpoint again while it waits (ms). */
export const COVERING_POLL_MS = 100;

/** Leaves per `GET /api/ledger/leaves` page at most. */
export const MAX_LEAVES_PER_PAGE = 1000;
/** Event data per leaves page at most (bytes, before base64): a page holds fewer leaves when they are large. */
export const MAX_LEAVES_BYTES = 4 * 1024 * 1024;

/**
 * One leaf as served: `leaf` is base64 of the exact leaf bytes, `leaf_hash`
 * base64 of SHA-256(0x00 || leaf). A leaf whose content is not public has
 * `leaf: null` and `withheld` saying why; its hash is always served.
 */
export interface LeafAnswer {
  index: number;
  position: number;
  leaf: string | null;
  leaf_hash: string;
  withheld?: string;
}

/**
 * Event types whose records anyone may read (receipts, timelines, commitments,
 * workflow receipts): their leaf bytes are public unless the writing key's
 * publication is `metadata`. Every other event (plans, coverage reports,
 * verification batches, ...) is served in full to compliance, auditor and admin keys only.
 */
export const PUBLIC_EVENT_TYPES: ReadonlySet<string> = new Set(['ReceiptRecorded', 'ReceiptCorrected', 'OutcomeReported', 'TimelineEntryAppended', 'TimelineImported', 'EndpointCommitmentRecorded', 'WorkflowReceiptRecorded']);

/** Why `viewer` may not read the leaf bytes of an event (null: it may). */
export function leafWithheld(type: string, keyWithholds: boolean, viewer: Pick<Principal, 'role'> | null): string | null {
  if (keyWithholds && !mayReadWithheld(viewer)) return 'recorded under a metadata publication setting (S13): the leaf bytes are served to auditor and admin keys';
  if (!PUBLIC_EVENT_TYPES.has(type) && !(viewer && ['compliance', 'auditor', 'admin'].includes(viewer.role))) return `a ${type} event: its leaf bytes are served to compliance, auditor and admin keys`;
  return null;
}

/**
 * Why `viewer` may not read the leaf bytes of the stored event `e` (null: it
 * may). A format 3 leaf holds no content (issue 29), so it is never withheld:
 * only its payload is, by {@link leafWithheld}'s rules.
 */
export function leafBytesWithheld(e: { type: string; format?: number | string | null }, keyWithholds: boolean, viewer: Pick<Principal, 'role'> | null): string | null {
  return Number(e.format ?? 1) === 3 ? null : leafWithheld(e.type, keyWithholds, viewer);
}

/**
 * Where a record's event sits in the log, as a verifier or page shows it:
 * its leaf, and (once a signed checkpoint covers it) the inclusion proof
 * against the newest checkpoint, checked here before it is shown.
 * `status`: `proven` (proof checked), `pending` (not yet in a signed
 * checkpoint: wait a second), `unavailable` (this deployment signs no
 * checkpoints) or `failed` (the proof did not check: never shown as proven).
 */
export interface LogLocation {
  leaf_index: number;
  position: number;
  leaf_hash: string;
  status: 'proven' | 'pending' | 'unavailable' | 'failed';
  checkpoint: { origin: string; size: number; root: string; signed_at: string; url: string } | null;
  inclusion_proof: string[] | null;
  /** Where to download a proof file for offline checking (`aer1 log verify-proof`). */
  proof_url: string;
  detail?: string;
  /**
   * The RFC 3161 anchor (S10) of `checkpoint`, when a TSA is configured:
   * genTime, the TSA's name, the size and where the token is served; null
   * while no anchored checkpoint covers the record yet. Absent without TSA_URL.
   */
  timestamp?: TimestampInfo | null;
}

/** What a record's log section says of its checkpoint's RFC 3161 anchor. */
export interface TimestampInfo {
  gen_time: string;
  tsa_name: string;
  size: number;
  url: string;
}

/** 400 with `invalid_query` unless `v` is a non-negative decimal safe integer (no sign, no leading zeros). */
export function countParam(name: string, v: string | undefined, required = true): number | undefined {
  if (v === undefined || v === '') {
    if (required) throw new BadInputError('invalid_query', `${name} is required`);
    return undefined;
  }
  if (!/^(0|[1-9][0-9]{0,15})$/.test(v) || !Number.isSafeInteger(Number(v))) throw new BadInputError('invalid_query', `${name} must be a non-negative integer (decimal, no leading zeros)`, { [name]: v.slice(0, 40) });
  return Number(v);
}
