/**
 * Receipts for the ingestion and queue benchmarks: a valid corpus receipt
 * (test/vectors/aer1-public/aer1-vectors.json) with a fresh random UUID as id per copy. The id
 * is not bound by the canonical bytes or the output hash, so every copy is a
 * distinct, valid receipt.
 *
 * {@link ledgerRows} computes, outside any timing, exactly the rows the
 * ledger writes for them (events with the ledger hash chain, and the
 * `receipts` read model), for the raw-driver reference.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyReceipt } from '../../src/core/aer1';
import { eventHash, LEDGER_GENESIS_HASH } from '../../src/core/ledger/event-hash';
import { streams } from '../../src/ledger/streams';
import type { ReceiptRecordedData } from '../../src/receipts/receipts.events';

export const CORPUS_RECEIPT = 'receipt-core-valid';

export function corpusReceipt(root: string): Record<string, unknown> {
  const v = JSON.parse(readFileSync(join(root, 'test', 'vectors', 'aer1-public', 'aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: Record<string, unknown> }[] };
  const found = v.vectors.find((x) => x.id === CORPUS_RECEIPT);
  if (!found) throw new Error(`vector ${CORPUS_RECEIPT} not found in test/vectors/aer1-public/aer1-vectors.json`);
  return found.input;
}

/** `n` request bodies (JSON text), each the corpus receipt with its own random UUID. */
export function receiptBodies(root: string, n: number): string[] {
  const base = corpusReceipt(root);
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = JSON.stringify({ ...base, id: randomUUID() });
  const check = verifyReceipt(JSON.parse(out[0]));
  if (check.verdict !== 'valid') throw new Error(`generated receipt does not verify: ${check.reasons.join(', ')}`);
  return out;
}

/**
 * `n` request bodies the service refuses with 422 after all of its
 * per-request work but the write: the corpus receipt with its own id and an
 * output hash that does not match its canonical bytes (S6 fails).
 */
export function refusedBodies(root: string, n: number): string[] {
  const base = corpusReceipt(root);
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = JSON.stringify({ ...base, id: randomUUID(), output_hash: `sha256:${'0'.repeat(64)}` });
  const check = verifyReceipt(JSON.parse(out[0]));
  if (check.verdict === 'valid') throw new Error('a refused receipt verifies');
  return out;
}

/** Column values in table order (events, then receipts), ready for a raw INSERT. */
export interface LedgerRows {
  events: unknown[][];
  receipts: unknown[][];
}

export const INSERT_EVENT = 'INSERT INTO events (position, stream_id, stream_position, type, data, recorded_at, prev_hash, event_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)';
export const INSERT_RECEIPT =
  'INSERT INTO receipts (id, id_as_given, form, wrapped_in, raw, verdict, reasons, provenance_class, tool, status, output_hash, created_at, supersedes, superseded_by, position, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)';

/**
 * The rows ReceiptsService.ingest + LedgerService.append + ReceiptsProjection
 * would write for `bodies` on an empty ledger, one event per receipt,
 * positions 1..n, chained from the genesis hash.
 */
export function ledgerRows(bodies: string[]): LedgerRows {
  const events: unknown[][] = [];
  const receipts: unknown[][] = [];
  let prev = LEDGER_GENESIS_HASH;
  const recordedAt = new Date().toISOString();
  bodies.forEach((raw, i) => {
    const doc = JSON.parse(raw) as Record<string, unknown>;
    const result = verifyReceipt(doc);
    if (result.verdict !== 'valid' || result.id === null) throw new Error('receipt does not verify');
    const tool = doc.tool as { name?: unknown } | string | undefined;
    const data: ReceiptRecordedData = {
      id: result.id,
      raw,
      form: result.form ?? 'core',
      wrapped_in: result.wrapped_in,
      verdict: result.verdict,
      reasons: result.reasons,
      provenance_class: result.provenance.class,
      tool: typeof tool === 'string' ? tool : typeof tool?.name === 'string' ? tool.name : null,
      status: typeof doc.status === 'string' ? doc.status : null,
      output_hash: result.computed.output_hash,
      created_at: typeof doc.created_at === 'string' ? doc.created_at : typeof doc.timestamp === 'string' ? doc.timestamp : null,
      supersedes: null,
    };
    const base = {
      position: i + 1,
      stream_id: streams.receipt(result.id),
      stream_position: 1,
      type: 'ReceiptRecorded',
      data: JSON.stringify(data),
      recorded_at: recordedAt,
      prev_hash: prev,
    };
    const hash = eventHash(base);
    events.push([base.position, base.stream_id, base.stream_position, base.type, base.data, base.recorded_at, base.prev_hash, hash]);
    receipts.push([data.id.toLowerCase(), data.id, data.form, data.wrapped_in, data.raw, data.verdict, JSON.stringify(data.reasons), data.provenance_class, data.tool, data.status, data.output_hash, data.created_at, data.supersedes, base.position, recordedAt]);
    prev = hash;
  });
  return { events, receipts };
}
