/**
 * Deterministic generators of valid AER-1 documents, for benchmarks and
 * memory checks: a -07 timeline of any length (NDJSON or a JSON array) and a
 * `verify --batch` input file. Everything is produced lazily, one line at a
 * time; the same options give the same bytes.
 *
 * Entry digests are computed with the core's S7.1 writer, so a generated
 * timeline is only as right as the core (the verifier then checks it).
 */
import { createHash } from 'node:crypto';
import { ChainEntry, entryDigestInput, merkleRoot, sha256Hex, ZERO_DIGEST } from '../core/aer1';

/** A name-based UUID (version 5 layout) from any string: stable ids for generated records. */
export function stableUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

const PROVENANCE = ['EXECUTED BY aer1-generate', 'OBSERVED VIA GATEWAY', 'LOGGED BY AGENT'] as const;
const TOOLS = ['fetch_page', 'search_index', 'summarise'] as const;
const BASE_TIME = Date.UTC(2026, 9, 1, 12, 0, 0);

function isoAt(offsetMs: number): string {
  return new Date(BASE_TIME + offsetMs).toISOString();
}

export interface TimelineOptions {
  entries: number;
  job: string;
}

/** A chain entry as written (member order of the draft's examples). */
export type GeneratedEntry = ChainEntry;

/**
 * The entries of a valid -07 timeline (S7.1, S7.2): seq 1..n, genesis
 * prev_digest of 64 zeros, each prev_digest the recomputed digest of the
 * previous entry, `close: true` on the last entry only. Provenance classes
 * rotate so the per-class counts are visible.
 */
export function* timelineEntries(opts: TimelineOptions): Generator<GeneratedEntry> {
  let prev = ZERO_DIGEST;
  for (let seq = 1; seq <= opts.entries; seq++) {
    const bytes = Buffer.from(JSON.stringify({ job: opts.job, seq, result: { ok: true, items: seq % 7 } }), 'utf8');
    const entry: GeneratedEntry = {
      seq,
      job_id: opts.job,
      id: stableUuid(`${opts.job}/${seq}`),
      tool: TOOLS[seq % TOOLS.length],
      provenance_class: PROVENANCE[seq % PROVENANCE.length],
      canonical_bytes: bytes.toString('base64'),
      prev_digest: prev,
    };
    const close = seq === opts.entries;
    if (close) entry.close = true;
    yield entry;
    prev = sha256Hex(
      entryDigestInput({
        close,
        id: entry.id,
        job_id: entry.job_id,
        output_hash: sha256Hex(bytes),
        prev_digest: entry.prev_digest,
        provenance_class: entry.provenance_class,
        seq,
        tool: entry.tool,
      }),
    );
  }
}

/** The timeline as text chunks: NDJSON (one entry per line) or a JSON array (one entry per line). */
export function* timelineText(opts: TimelineOptions & { format: 'ndjson' | 'array' }): Generator<string> {
  if (opts.format === 'ndjson') {
    for (const e of timelineEntries(opts)) yield JSON.stringify(e) + '\n';
    return;
  }
  let first = true;
  yield '[\n';
  for (const e of timelineEntries(opts)) {
    yield (first ? '' : ',\n') + JSON.stringify(e);
    first = false;
  }
  yield '\n]\n';
}

/** A valid core-form receipt (S3) over `payload`. */
export function coreReceipt(name: string, payload: unknown, at: number): Record<string, unknown> {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  return {
    id: stableUuid(name),
    receipt_schema_version: '0.3',
    created_at: isoAt(at),
    tool: { name: TOOLS[at % TOOLS.length], version: '1.0.0', scope: 'read' },
    provenance_class: PROVENANCE[at % PROVENANCE.length],
    canonical_bytes: bytes.toString('base64'),
    output_hash: 'sha256:' + sha256Hex(bytes),
    verification_status: 'verified',
  };
}

/** A valid transport-form `_receipt` (guide). */
export function transportReceipt(name: string, payload: unknown, at: number): Record<string, unknown> {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  return {
    id: stableUuid(name),
    tool: TOOLS[at % TOOLS.length],
    timestamp: isoAt(at),
    tool_context: { server: 'generated' },
    canonical_bytes: bytes.toString('base64'),
    canonical_byte_length: bytes.length,
    hash_algorithm: 'sha256',
    output_hash: 'sha256:' + sha256Hex(bytes),
    provenance_class: 'OBSERVED VIA GATEWAY',
    status: 'ok',
    verification_status: 'execution_observed',
  };
}

/** A valid workflow receipt (S8) with its step receipts at hand. */
export function workflowWithSteps(name: string, steps: number, at: number): Record<string, unknown> {
  const receipts = Array.from({ length: steps }, (_, k) => coreReceipt(`${name}/step/${k + 1}`, { workflow: name, step: k + 1 }, at + k));
  const ids = receipts.map((r) => r.id as string);
  return {
    workflow: {
      type: 'verifiable-workflow-receipt',
      version: '1',
      workflow_id: stableUuid(`${name}/workflow`),
      receipt_id: stableUuid(`${name}/receipt`),
      session_id: `session-${name}`,
      goal: 'generated workflow',
      status: 'ok',
      steps: receipts.map((r, k) => ({
        seq: k + 1,
        tool: (r.tool as { name: string }).name,
        receipt_id: r.id,
        receipt_hash: (r.output_hash as string).slice('sha256:'.length),
        started_at: isoAt(at + k * 1000),
        ended_at: isoAt(at + k * 1000 + 500),
        status: 'ok',
      })),
      merkle_root: merkleRoot(ids),
      output_hash: sha256Hex(`${name}/output`),
      verify_url: `https://verifier.example/workflow/${stableUuid(`${name}/workflow`)}`,
    },
    step_receipts: receipts,
  };
}

export interface BatchOptions {
  lines: number;
  /** When > 0, every k-th line carries a receipt whose bytes were altered after hashing (output_hash_mismatch). */
  tamperEvery: number;
}

/**
 * Lines for `aer1 verify --batch`: mostly core receipts, with transport
 * receipts, three-entry timelines and two-step workflows mixed in; kind is
 * given on some lines and left to inference (absent or "auto") on others.
 */
export function* batchLines(opts: BatchOptions): Generator<string> {
  for (let i = 1; i <= opts.lines; i++) {
    const id = `doc-${i}`;
    let line: Record<string, unknown>;
    switch (i % 10) {
      case 7: {
        const input = [...timelineEntries({ entries: 3, job: `job-${i}` })];
        line = { id, kind: 'chain', input };
        break;
      }
      case 8:
        line = { id, kind: 'auto', input: workflowWithSteps(`wf-${i}`, 2, i) };
        break;
      case 9:
        line = { id, input: transportReceipt(id, { line: i }, i) };
        break;
      default:
        line = { id, kind: 'receipt', input: coreReceipt(id, { line: i, value: i * 31 }, i) };
    }
    if (opts.tamperEvery > 0 && i % opts.tamperEvery === 0) {
      const r = coreReceipt(id, { line: i }, i);
      r.canonical_bytes = Buffer.from(JSON.stringify({ line: i, tampered: true })).toString('base64');
      line = { id, kind: 'receipt', input: r };
    }
    yield JSON.stringify(line) + '\n';
  }
}
