/**
 * The evidence pack (issue 16, "The pack"): `aer1-evidence-pack/1`, one
 * JSON Lines document (UTF-8, one JSON object a line, `\n` after every line)
 * holding everything an auditor needs to check a job, a workflow or a
 * coverage report offline. Pure: the server writes it with {@link PackWriter},
 * `aer1 verify-pack` reads it (docs/evidence-pack.md describes every member).
 *
 * Every line is a member: `{"member": "<name>", ...}` with a unique name.
 * The SHA-256 of a member is over its line's bytes without the final `\n`.
 * After every {@link MANIFEST_CHUNK} members a `manifest/<n>` line lists
 * `[name, sha256 hex]` of the members since the previous one; the last line,
 * `manifest`, lists every chunk with its own SHA-256 and the member count.
 * So the writer never holds more than one chunk of hashes (a pack of any size
 * streams in constant memory), and a reader checks each member as it passes.
 */
import { sha256Hex } from '../aer1';

/** The format name carried by the header and the final manifest. */
export const PACK_FORMAT = 'aer1-evidence-pack/1';

/** Members listed per `manifest/<n>` chunk. */
export const MANIFEST_CHUNK = 1000;

/** What a pack is about. */
export type PackSubjectKind = 'job' | 'workflow' | 'coverage_report';

/** The first line. */
export interface PackHeader {
  member: 'header';
  format: typeof PACK_FORMAT;
  subject: { kind: PackSubjectKind; id: string };
  /** RFC 3339 UTC time the pack was written. */
  generated_at: string;
  /** Every event in the pack is at or below this ledger position (= the checkpoint's tree size). */
  as_of_position: number;
  /** The server that wrote it (its PUBLIC_BASE_URL). */
  ledger: string;
  /** The role of the key that asked for it: what it may read decides what is withheld (see `withheld` on members). */
  requested_by_role: string;
}

/** `log/vkey`: the log's verifier key as the server states it (the CLI trusts only `--vkey`). */
export interface VkeyMember {
  member: 'log/vkey';
  vkey: string | null;
}

/** `log/checkpoint`: the signed note verbatim (with the witnesses' cosignature lines when it has them). */
export interface CheckpointMember {
  member: 'log/checkpoint';
  size: number;
  note: string;
}

/** `log/timestamp`: a DER RFC 3161 TimeStampResp over the checkpoint body (base64), when the ledger holds one. */
export interface TimestampMember {
  member: 'log/timestamp';
  timestamp: string;
}

/**
 * `log/stream-heads` (then `log/stream-heads/2`, `/3`, ...): a stream-heads
 * statement (`aer1-stream-heads/1`, src/core/tlog/stream-heads.ts) signed by
 * the log key as of the pack's checkpoint, for streams the subject spans;
 * together the statements name every one of them (issue 30).
 */
export interface StreamHeadsMember {
  member: string;
  note: string;
}

/**
 * `log/nostr` (issue 33): the newest Nostr anchor of a checkpoint no larger
 * than the pack's: the signed NIP-01 `event` (its content that checkpoint's
 * note), that checkpoint's signed `note` and `size`, and the RFC 6962
 * consistency proof (base64 hashes) from it to the pack's checkpoint (empty
 * when they are the same size), so every event of the pack below `size` is
 * in the anchored tree. Present when the ledger holds such an anchor.
 */
export interface NostrMember {
  member: 'log/nostr';
  size: number;
  note: string;
  consistency: string[];
  event: Record<string, unknown>;
}

/**
 * `event/<position>`: one ledger event as a leaf of the log: base64 of the
 * leaf bytes (null when withheld from the requesting key), the RFC 6962 leaf
 * hash and the inclusion proof against the pack's checkpoint.
 */
export interface EventMember {
  member: string;
  position: number;
  leaf_index: number;
  type: string;
  leaf: string | null;
  leaf_hash: string;
  proof: string[];
  withheld?: string;
  /** Format 3: the payload's exact bytes, base64 (null when withheld or erased). */
  payload?: string | null;
  /** Format 3: the 32-byte salt of the payload commitment, lowercase hex (null when withheld or erased). */
  payload_salt?: string | null;
  /** Format 3, payload erased (issue 29): when, by whom, on what basis, and the position of the `PayloadsErased` event. */
  erased?: { erasure_id: string; position: number; erased_at: string; by: string; legal_basis: string; reason: string };
}

/**
 * `receipt/<id>`: a receipt's exact bytes (`raw`, as stored), from the
 * `ReceiptRecorded` event at `position`. A receipt the subject names that
 * the ledger does not hold (as of the checkpoint) is stated with
 * `recorded: false`, `position: null`, `raw: null` (the server's statement).
 */
export interface ReceiptMember {
  member: string;
  id: string;
  position: number | null;
  raw: string | null;
  withheld?: string;
  recorded?: false;
}

/**
 * `outcome/<id>`: an outcome report's exact bytes (issue 18, `raw` as
 * received, lowercase `id`), from the `OutcomeReported` event at `position`;
 * `receipt_id` (lowercase) is the recorded call it answers. A pack holds the
 * outcomes answering the receipts its subject's entries or workflow steps
 * name (as of the report's position in a coverage-report pack).
 */
export interface OutcomeMember {
  member: string;
  id: string;
  receipt_id: string;
  position: number;
  raw: string | null;
  withheld?: string;
}

/** `entry/<seq>`: a timeline entry as recorded (its exact text), from the event at `position`. */
export interface EntryMember {
  member: string;
  seq: number;
  position: number;
  raw: string | null;
  withheld?: string;
  /** Issue 29: the entry's content was erased (`raw` null); the erasure its event member names. */
  erased?: { erasure_id: string; position: number; erased_at: string; by: string; legal_basis: string; reason: string };
}

/** `commitment/<id>`: an endpoint commitment's exact text with what the ledger found when it was recorded. */
export interface CommitmentMember {
  member: string;
  id: string;
  position: number;
  raw: string;
  attestation: { binding: boolean; reasons: string[]; entry_count_at_record: number; witness: unknown };
}

/** `workflow/<id>/<position>`: a workflow receipt's exact bytes. */
export interface WorkflowMember {
  member: string;
  id: string;
  position: number;
  raw: string;
}

/** `plan/<plan_id>/<version>`: a plan version in force (its normalized plan's canonical JSON). */
export interface PlanMember {
  member: string;
  plan_id: string;
  version: number;
  position: number;
  /** Null when erased. */
  digest: string | null;
  registered_at: string;
  /** Null when erased (issue 29, named by position). */
  plan: string | null;
  /** Issue 29: the version's content was erased; the erasure its event member names. */
  erased?: { erasure_id: string; position: number; erased_at: string; by: string; legal_basis: string; reason: string };
}

/** `report/<report_id>`: a coverage report as recorded, with its digest. */
export interface ReportMember {
  member: string;
  report_id: string;
  position: number;
  issued_at: string;
  /** Null when erased. */
  digest: string | null;
  /** Null when erased (issue 29, named by position): listed, never recomputed. */
  report: unknown;
  /** Issue 29: the report's content was erased; the erasure its event member names. */
  erased?: { erasure_id: string; position: number; erased_at: string; by: string; legal_basis: string; reason: string };
  /**
   * Who recorded the subject and each receipt, as the server read its keys
   * when it issued the report (key owners are not in the log): what the
   * recomputation uses for the report's `recorded_by` section.
   */
  recorders: { record: unknown; receipts: Record<string, unknown> };
  /**
   * A job's report only: for each receipt its entries name that entries of
   * other jobs name too as of the report's position, those jobs (the server's
   * statement, read from the ledger's entries: what the recomputation uses for
   * the `receipt_shared_with_other_job` findings, issue 26).
   */
  other_jobs?: Record<string, string[]>;
}

/** `manifest/<n>`: the SHA-256 of the members since the previous chunk. */
export interface ManifestChunk {
  member: string;
  members: [string, string][];
}

/** The last line. */
export interface PackTrailer {
  member: 'manifest';
  format: typeof PACK_FORMAT;
  /** Members before the manifest chunks and this line. */
  member_count: number;
  chunks: [string, string][];
}

/** The member names, one way of writing each. */
export const memberName = {
  event: (position: number): string => `event/${position}`,
  receipt: (id: string): string => `receipt/${id}`,
  entry: (seq: number): string => `entry/${seq}`,
  commitment: (id: string): string => `commitment/${id}`,
  workflow: (id: string, position: number): string => `workflow/${id}/${position}`,
  plan: (planId: string, version: number): string => `plan/${planId}/${version}`,
  report: (reportId: string): string => `report/${reportId}`,
  outcome: (outcomeId: string): string => `outcome/${outcomeId}`,
  chunk: (n: number): string => `manifest/${n}`,
  /** The k-th stream-heads statement, from 1: `log/stream-heads`, then `log/stream-heads/2`, ... */
  streamHeads: (k: number): string => (k === 1 ? 'log/stream-heads' : `log/stream-heads/${k}`),
};

/** SHA-256 (hex) of a member line (without its `\n`). */
export function memberHash(line: string | Uint8Array): string {
  return sha256Hex(line);
}

/**
 * Writes a pack line by line: {@link member} returns the lines to send (the
 * member, and a manifest chunk after every {@link MANIFEST_CHUNK} members),
 * {@link finish} the remaining chunk and the trailer. Holds at most one
 * chunk of hashes. Throws on a member name used twice within a chunk window
 * only by construction of the caller (names are the caller's to keep unique).
 */
export class PackWriter {
  private pending: [string, string][] = [];
  private readonly chunks: [string, string][] = [];
  private count = 0;

  /** The line(s) for one member object (its `member` first). */
  member<T extends { member: string }>(obj: T): string {
    const line = JSON.stringify(obj);
    this.pending.push([obj.member, memberHash(line)]);
    this.count++;
    let out = line + '\n';
    if (this.pending.length >= MANIFEST_CHUNK) out += this.flushChunk();
    return out;
  }

  private flushChunk(): string {
    const chunk: ManifestChunk = { member: memberName.chunk(this.chunks.length), members: this.pending };
    const line = JSON.stringify(chunk);
    this.chunks.push([chunk.member, memberHash(line)]);
    this.pending = [];
    return line + '\n';
  }

  /** The last chunk (if any member is not yet listed) and the trailer. */
  finish(): string {
    let out = this.pending.length > 0 ? this.flushChunk() : '';
    const trailer: PackTrailer = { member: 'manifest', format: PACK_FORMAT, member_count: this.count, chunks: this.chunks };
    out += JSON.stringify(trailer) + '\n';
    return out;
  }
}
