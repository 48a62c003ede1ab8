/**
 * Test fixtures for coverage: valid -07 timelines built with the core's
 * S7.1 digest, their rebuilt truncations, endpoint commitments and
 * transport receipts whose ids match the entries.
 */
import { createHash } from 'node:crypto';
import { ChainEntry, entryDigest, sha256Hex, ZERO_DIGEST } from '../../src/core/aer1';

/** A name-based UUID (v5 layout) so fixtures are stable. */
export function uuidFor(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export interface StepSpec {
  tool: string;
  provenance?: string;
  /** Transport status of the receipt for this entry ("ok" by default); null: no receipt. */
  status?: string | null;
}

export type Entry = ChainEntry;

export const EXECUTED = 'EXECUTED BY LEDGER';

function bytesFor(job: string, k: number, tool: string): Buffer {
  return Buffer.from(JSON.stringify({ job, step: k, tool }), 'utf8');
}

/** A valid closed -07 timeline: seq 1..n, genesis zeros, each prev_digest the recomputed digest of the previous entry. */
export function buildTimeline(job: string, steps: StepSpec[]): Entry[] {
  const out: Entry[] = [];
  let prev = ZERO_DIGEST;
  steps.forEach((s, i) => {
    const seq = i + 1;
    const e: Entry = {
      seq,
      job_id: job,
      id: uuidFor(`${job}/${seq}`),
      tool: s.tool,
      provenance_class: s.provenance ?? EXECUTED,
      canonical_bytes: bytesFor(job, seq, s.tool).toString('base64'),
      prev_digest: prev,
    };
    if (seq === steps.length) e.close = true;
    const d = entryDigest(e);
    if (d === null) throw new Error('fixture entry does not digest');
    prev = d;
    out.push(e);
  });
  return out;
}

/** The endpoint commitment a witness would publish for `timeline`. */
export function commitmentFor(timeline: Entry[], publishedAt = '2026-10-01T12:00:00Z'): Record<string, unknown> {
  const last = timeline[timeline.length - 1];
  return { job_id: last.job_id, final_entry_digest: entryDigest(last), entry_count: timeline.length, published_at: publishedAt };
}

/** A valid transport receipt for `entry` with the given status. */
export function receiptFor(entry: Entry, status = 'ok'): Record<string, unknown> {
  const bytes = Buffer.from(entry.canonical_bytes, 'base64');
  return {
    id: entry.id,
    tool: entry.tool,
    timestamp: '2026-10-01T12:00:00Z',
    canonical_bytes: entry.canonical_bytes,
    canonical_byte_length: bytes.length,
    hash_algorithm: 'sha256',
    output_hash: 'sha256:' + sha256Hex(bytes),
    provenance_class: entry.provenance_class,
    status,
    verification_status: status === 'ok' ? 'execution_observed' : 'not_verified',
  };
}

/** Receipts for the entries whose spec has a status (default "ok"), keyed by lowercase id. */
export function receiptsFor(timeline: Entry[], steps: StepSpec[]): Map<string, unknown> {
  const m = new Map<string, unknown>();
  timeline.forEach((e, i) => {
    const st = steps[i]?.status;
    if (st === null) return;
    m.set(e.id.toLowerCase(), receiptFor(e, st ?? 'ok'));
  });
  return m;
}

/** The richer eight-entry job used for the truncation scenario: distinct tools. */
export const EIGHT_STEPS: StepSpec[] = [
  { tool: 'open_ticket' },
  { tool: 'fetch_customer' },
  { tool: 'check_sanctions' },
  { tool: 'score_risk' },
  { tool: 'draft_decision' },
  { tool: 'approve_limit' },
  { tool: 'notify_customer' },
  { tool: 'close_ticket' },
];

/** The plan for {@link EIGHT_STEPS}: one action per tool, each after the one before. */
export function eightStepPlan(job: string): Record<string, unknown> {
  return {
    job_id: job,
    title: 'Credit limit change',
    unplanned: 'flag',
    expected_actions: EIGHT_STEPS.map((s, i) => ({ action_id: s.tool.replace('_', '-'), tool: s.tool, ...(i > 0 ? { after: [EIGHT_STEPS[i - 1].tool.replace('_', '-')] } : {}) })),
  };
}
