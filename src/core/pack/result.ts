/**
 * What checking an evidence pack (`aer1-evidence-pack/1`, docs/evidence-pack.md)
 * reports: a closed set of check codes, the failures named by member and
 * code, the counts and verdicts. The phases (src/core/pack/check.ts) share
 * one {@link Tally}. Pure: no file, no network.
 */
import type { NoteVerifier } from '../tlog';

/**
 * Every check the pack checker passes or fails, by its code. A failure is
 * always one of these (never a thrown message); the CLI titles them in this
 * order (src/cli/commands/verify-pack.ts).
 */
export const PACK_CHECKS = [
  'member_missing',
  'format',
  'manifest',
  'vkey',
  'checkpoint_signature',
  'cosignatures',
  'timestamp',
  'nostr_event',
  'nostr_signature',
  'nostr_content',
  'nostr_consistency',
  'nostr_pubkey',
  'leaf_hash',
  'inclusion',
  'leaf_event',
  'payload_commitment',
  'member_name',
  'duplicate',
  'subject',
  'leaf_bytes',
  'plan_digest',
  'aer1_verdict',
  'report_digest',
  'report_recomputed',
  'stream_heads',
  'stream_incomplete',
  'stream_unlisted',
] as const;

/** The closed union of the pack checker's codes: `member_missing` | `format` | `manifest` | ... (see {@link PACK_CHECKS}). */
export type PackErrorCode = (typeof PACK_CHECKS)[number];

/** One failed check: which member, which check, why (in words). */
export interface PackFailure {
  member: string;
  check: PackErrorCode;
  detail: string;
}

/**
 * Counts of members by kind, and of what was withheld or only stated.
 * `members` is every member held except the manifest (its chunks and the
 * final manifest): `header` + `log` + `events` + the record kinds + `other`.
 */
export interface PackCounts {
  members: number;
  /** The header (1 in a well-formed pack). */
  header: number;
  /** `log/vkey`, `log/checkpoint`, `log/timestamp`, `log/nostr`, `log/stream-heads` (and its numbered followers). */
  log: number;
  events: number;
  receipts: number;
  entries: number;
  commitments: number;
  workflows: number;
  plans: number;
  reports: number;
  outcomes: number;
  /** Members of no kind the format names (each a `format` failure). */
  other: number;
  /** `manifest/<k>` chunks (not members: each is compared with the final manifest). */
  manifest_chunks: number;
  withheld: number;
  /** Format 3 events whose payload was erased (issue 29): leaf and inclusion checked, content gone. */
  erased: number;
  withheld_records: number;
  not_recorded: number;
}

/** The outcome of checking a pack. */
export interface PackReport {
  verified: boolean;
  /** false: not a pack at all (exit 2). */
  is_pack: boolean;
  subject: { kind: string; id: string } | null;
  checkpoint: { origin: string; size: number; root: string } | null;
  cosignatures: { name: string; timestamp: number }[];
  timestamp: { gen_time: string; tsa: string } | 'not_checked' | null;
  /** The carried Nostr anchor when its signature, content and consistency checked (`pubkey_checked`: against --nostr-pubkey); null when none or it failed. */
  nostr: { event_id: string; pubkey: string; created_at: number; size: number; pubkey_checked: boolean } | null;
  /**
   * `withheld`: events whose leaf is withheld; `withheld_records`: records
   * whose bytes are withheld; `not_recorded`: `receipt/<id>` members stating
   * that a receipt the subject names is not recorded (the server's word, not
   * provable offline). Any of them makes the pack NOT VERIFIED.
   */
  counts: PackCounts;
  /** Passed checks by code, counted. */
  passed: Partial<Record<PackErrorCode, number>>;
  /** `outcomes`: verdicts of the outcome reports (issue 18), counted like the receipts'. */
  verdicts: { receipts: Record<string, number>; timeline: string | null; workflow: string | null; outcomes: Record<string, number> };
  reports: { report_id: string; digest: string; recomputed: string | null }[];
  /**
   * What the subject's coverage report concludes (the pack's subject report,
   * or the newest report in the pack by ledger position), as the report
   * states it: its `result` and the shared headline
   * (src/core/coverage/headline.ts). A verified pack with `result: findings`
   * is authentic evidence of findings, never of full coverage. Null: no report.
   * `established`: whether this pack establishes it (true only when the pack
   * is verified; otherwise the report's words are only what it states).
   */
  subject_result: { report_id: string; position: number; result: string; headline: string | null; established: boolean } | null;
  /**
   * What the pack's stream-heads statements (issue 30) establish:
   * `statements` that verified, `streams` they name; `proven` when every
   * stream the subject spans is named and held from its first event to its
   * stated head, linked by `stream_prev`; `not_provable_before`: a position
   * below which some named stream has format 1/2 events (no `stream_prev`),
   * null when none. A pack is VERIFIED only when `proven`.
   */
  completeness: { statements: number; streams: number; proven: boolean; not_provable_before: number | null };
  failures: PackFailure[];
  /** What was not checked (withheld bytes, a token without --tsa-certs, a listed member the pack lacks and what depends on it). */
  not_checked: string[];
}

/** Whom the pack must be signed by: the log key, witnesses and quorum, the TSA chain, trusted commitment keys. */
export interface PackPolicy {
  /** The log's key (type 0x01); its name is the log origin. */
  log: NoteVerifier;
  witnesses: readonly NoteVerifier[];
  /** Valid cosignatures needed (0 without witnesses). */
  quorum: number;
  /** PEM of the TSA chain, to check a carried RFC 3161 token. */
  tsaCertsPem?: string;
  /** The trusted Nostr publisher key (`--nostr-pubkey`, 64 hex), to check a carried anchor's publisher. */
  nostrPubkey?: string;
  /** Keys trusted for endpoint commitments (`--trusted-key`), to judge attested ones. */
  commitmentKeys?: readonly NoteVerifier[];
}

/** A ledger event as a leaf holds it (the fields the checks read). */
export interface PackLeafEvent {
  position: number;
  stream_id: string;
  stream_position: number;
  type: string;
  key_name: string | null;
  /** The event data as JSON text, exactly as hashed (format 1/2) or committed to (format 3, once its payload is checked); null for a format 3 leaf without its payload. */
  data: string | null;
  format: number;
  payload_commitment: string | null;
  /** Format 3: the ledger position of the stream's previous event (0 for its first); null or absent for format 1/2. */
  stream_prev?: number | null;
  /** Format 3: the leaf's public identifiers; null or absent for format 1/2. */
  ids?: Readonly<Record<string, string | number>> | null;
  /** Set when the pack says this format 3 event's payload was erased (checked against the `PayloadsErased` event it names). */
  erased?: { erasure_id: string; position: number; erased_at: string; by: string; legal_basis: string; reason: string };
}

/**
 * Verifiers the checker is given, not imported: the leaf parser, the
 * witness quorum check and RFC 3161 verification live outside this folder
 * (src/core/ledger/leaf.ts, src/core/tlog/quorum.ts, src/core/timestamp). `parseJson` decodes a
 * line as strict UTF-8 JSON with the duplicate-member check.
 */
export interface PackDeps {
  parseJson(bytes: Buffer): { ok: true; value: unknown } | { ok: false; detail: string };
  /** Throws an Error saying why when the leaf is not a canonical ledger event. */
  parseLeaf(leaf: Buffer): PackLeafEvent;
  /** A format 3 event with its payload, once SHA-256(salt || payload) equals its commitment (src/core/ledger/leaf.ts `withPayload`). */
  withPayload(e: PackLeafEvent, payload: Buffer, salt: Buffer): { ok: true; event: PackLeafEvent } | { ok: false; code: string; message: string };
  quorumCheck(note: string, policy: PackPolicy): { check: { ok: boolean | null; detail: string }; valid: readonly { name: string; timestamp: number }[] };
  /** RFC 3161, loaded only when a token is checked. */
  timestamp(): Promise<{
    checkpointTimestampDigest(note: string): Buffer;
    verifyTimeStampResponse(der: Buffer, digest: Buffer, trust: { certsPem: string }): Promise<{ ok: true; genTime: string; tsaName: string } | { ok: false; code: string; message: string }>;
  }>;
}

/** The failures, passes, counts and unchecked items the phases add to. */
export class Tally {
  readonly failures: PackFailure[] = [];
  readonly passed: Partial<Record<PackErrorCode, number>> = {};
  readonly notChecked: string[] = [];
  readonly counts: PackCounts = { members: 0, header: 0, log: 0, events: 0, receipts: 0, entries: 0, commitments: 0, workflows: 0, plans: 0, reports: 0, outcomes: 0, other: 0, manifest_chunks: 0, withheld: 0, erased: 0, withheld_records: 0, not_recorded: 0 };

  readonly fail = (member: string, check: PackErrorCode, detail: string): void => void this.failures.push({ member, check, detail });
  readonly pass = (check: PackErrorCode): void => void (this.passed[check] = (this.passed[check] ?? 0) + 1);
}

/** A record member: its name and the ledger position of its event. */
export interface RecordRef {
  member: string;
  position: number;
}

/** Parse JSON text, undefined when it is not a string or not JSON. */
export function parseText(raw: unknown): unknown {
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}
