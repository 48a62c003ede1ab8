/**
 * Event format 3 against format 2 (issue 29, "Measured"): receipt ingestion
 * over HTTP (NDJSON batches of 1,000 and single POSTs, as figure 4 measures
 * them) with the application writing format 3 (the default) and format 2
 * (`LEDGER_EVENT_FORMAT=2`, the bench knob: the leaf holds the data, no salt,
 * no commitment), alternately in one run, on SQLite and PostgreSQL; and, in
 * process, the cost per event of what format 3 adds: 32 random bytes of salt,
 * SHA-256(salt || payload), the public ids and the leaf that holds them
 * instead of the data. Target: format 3 within 10% of format 2.
 */
import { sha256Hex } from '../src/core/aer1';
import { eventHashInput, payloadCommitment } from '../src/core/ledger/event-hash';
import { publicIdsTextOf } from '../src/core/ledger/public-ids';
import { SaltPool } from '../src/ledger/salt-pool';
import { batch, single } from './ingest';
import { BenchContext, FigureResult } from './lib/figure';
import { Dialect } from './lib/db';
import { fmt, pct, sideBySide } from './lib/measure';
import { ledgerRows, receiptBodies } from './lib/receipts';

/** Format 3 ingestion against format 2 of the same run. */
export const FORMAT3_TARGET = 0.9;
const FORMAT2 = { LEDGER_EVENT_FORMAT: '2' };

/**
 * In process, per receipt event: the format 2 leaf and its hash against the
 * format 3 work (salt, commitment, salt hex, public ids, leaf, hash) over the
 * same event data; and the salt and commitment alone. Seconds of the best run.
 */
export function leafWork(root: string, n: number, reps: number): Promise<{ f2: number; f3: number; saltCommit: number; n: number }> {
  const rows = ledgerRows(receiptBodies(root, n)).events;
  const events = rows.map((r) => ({ position: r[0] as number, stream_id: r[1] as string, stream_position: r[2] as number, type: r[3] as string, data: r[4] as string, recorded_at: r[5] as string, prev_hash: r[6] as string, obj: JSON.parse(r[4] as string) as unknown }));
  let sink = 0;
  // As LedgerService.appendFormat2 writes a format 2 event: the leaf (the data inside it) and its hash.
  const f2 = (): void => {
    for (const e of events) {
      const base = { position: e.position, stream_id: e.stream_id, stream_position: e.stream_position, type: e.type, data: e.data, recorded_at: e.recorded_at, prev_hash: e.prev_hash, format: 2 as const, key_id: 'k', key_name: 'producer' };
      const ev = { ...base, event_hash: sha256Hex(eventHashInput(base)) };
      sink ^= ev.event_hash.charCodeAt(0);
    }
  };
  // As LedgerService.append writes a format 3 event: a salt from the pool, the public ids, the commitment, the leaf and its hash.
  const pool = new SaltPool();
  const f3 = (): void => {
    for (const e of events) {
      const salt = pool.next();
      const ev = {
        position: e.position,
        stream_id: e.stream_id,
        stream_position: e.stream_position,
        type: e.type,
        data: e.data,
        recorded_at: e.recorded_at,
        prev_hash: e.prev_hash,
        format: 3,
        key_id: 'k',
        key_name: 'producer',
        stream_prev: 0,
        public_ids: publicIdsTextOf(e.type, e.obj),
        payload_commitment: payloadCommitment(salt, e.data),
        payload_salt: salt.toString('hex'),
        event_hash: '',
      };
      ev.event_hash = sha256Hex(eventHashInput(ev));
      sink ^= ev.event_hash.charCodeAt(0);
    }
  };
  const saltCommit = (): void => {
    for (const e of events) {
      const salt = pool.next();
      sink ^= payloadCommitment(salt, e.data).charCodeAt(9) ^ salt.toString('hex').charCodeAt(0);
    }
  };
  return (async () => {
    const ab = await sideBySide(reps, f2, f3);
    const sc = await sideBySide(reps, saltCommit, saltCommit);
    if (sink === -1) throw new Error('unreachable');
    return { f2: ab.a, f3: ab.b, saltCommit: Math.min(sc.a, sc.b), n };
  })();
}

export async function benchEventFormat(ctx: BenchContext): Promise<FigureResult[]> {
  const nBatch = ctx.quick ? 5_000 : 50_000;
  const nSingle = ctx.quick ? 2_000 : 10_000;
  const reps = Math.min(ctx.reps, 3);
  const out: FigureResult[] = [];
  const within = (r: number): string => (r >= FORMAT3_TARGET ? `Target met (${pct(r)} >= ${pct(FORMAT3_TARGET)}).` : `Target missed (${pct(r)} < ${pct(FORMAT3_TARGET)}).`);

  ctx.log(`event format: in process, ${fmt(nBatch)} receipt events, format 2 and format 3 leaves (${ctx.reps} alternating runs)`);
  const w = await leafWork(ctx.root, nBatch, ctx.reps);
  const us = (s: number): number => (s / w.n) * 1e6;
  out.push({
    figure: 'event format 3: added cost per receipt event, in process',
    value: us(w.f3) - us(w.f2),
    unit: 'µs/event',
    reference: { what: 'format 2 leaf and hash of the same events', value: us(w.f2), unit: 'µs/event' },
    ratio: w.f2 / w.f3,
    target: 'reported',
    met: null,
    note:
      `${fmt(w.n)} ReceiptRecorded events (the corpus receipt, about ${fmt(Buffer.byteLength(eventData(ctx.root)))} bytes of data each). Format 2: the leaf (the data inside it) and its SHA-256. ` +
      'Format 3, as the writer does it (src/ledger/ledger.service.ts): 32 random bytes of salt (cut from a pool of 1,024 salts filled by one randomBytes call), SHA-256(salt || payload) in one hash call over a reused buffer, the salt as hex, the public ids (names sorted once per type) and the leaf (no data inside it) and its SHA-256: the payload is hashed once either way (in the leaf for format 2, in the commitment for format 3), so what format 3 adds is the salt, a second, short hash and the public ids, and what it saves is escaping the data into the leaf. A negative added cost means format 3 is the cheaper of the two.',
    details: {
      'format 2 leaf + event hash, µs/event': us(w.f2).toFixed(2),
      'format 3 leaf + event hash + salt + commitment + public ids, µs/event': us(w.f3).toFixed(2),
      'salt (pool, hex) + commitment alone, µs/event': us(w.saltCommit).toFixed(2),
    },
  });

  for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
    const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const bodies = receiptBodies(ctx.root, nBatch);
    const b2: number[] = [];
    const b3: number[] = [];
    for (let i = 0; i < reps; i++) {
      ctx.log(`event format ${dialect}: NDJSON batches, ${fmt(nBatch)} receipts, format 2 (${i + 1} of ${reps})`);
      b2.push((await batch(ctx, dialect, bodies, FORMAT2)).rate);
      ctx.log(`event format ${dialect}: NDJSON batches, ${fmt(nBatch)} receipts, format 3 (${i + 1} of ${reps})`);
      b3.push((await batch(ctx, dialect, bodies)).rate);
    }
    const best2 = Math.max(...b2);
    const best3 = Math.max(...b3);
    out.push({
      figure: `event format 3 vs 2: receipt ingestion, NDJSON batch of 1,000, ${name}`,
      value: best3,
      unit: 'receipts/s',
      reference: { what: 'the same batches written in format 2 (LEDGER_EVENT_FORMAT=2), this run', value: best2, unit: 'receipts/s' },
      ratio: best3 / best2,
      target: `>= ${pct(FORMAT3_TARGET)} of format 2`,
      met: best3 / best2 >= FORMAT3_TARGET,
      note: `${fmt(nBatch)} receipts per run, alternating format 2 and format 3 on fresh databases; the best of ${reps} each. Format 3 stores the salt, the commitment, the public ids and stream_prev beside each event (about 180 more bytes a row) and reads the stream's head position with its version. ${within(best3 / best2)}`,
      details: { 'runs, format 2, receipts/s': b2.map((x) => fmt(Math.round(x))).join(' / '), 'runs, format 3, receipts/s': b3.map((x) => fmt(Math.round(x))).join(' / ') },
    });
    ctx.log(`event format ${dialect}: single POST, ${fmt(nSingle)} receipts, format 2`);
    const s2 = await single(ctx, dialect, receiptBodies(ctx.root, nSingle), 1, 201, FORMAT2);
    ctx.log(`event format ${dialect}: single POST, ${fmt(nSingle)} receipts, format 3`);
    const s3 = await single(ctx, dialect, receiptBodies(ctx.root, nSingle));
    out.push({
      figure: `event format 3 vs 2: receipt ingestion, single POST (autocannon, 50 connections), ${name}`,
      value: s3.rate,
      unit: 'receipts/s',
      reference: { what: 'the same POSTs written in format 2 (LEDGER_EVENT_FORMAT=2), this run', value: s2.rate, unit: 'receipts/s' },
      ratio: s3.rate / s2.rate,
      target: `>= ${pct(FORMAT3_TARGET)} of format 2`,
      met: s3.rate / s2.rate >= FORMAT3_TARGET,
      note: `${fmt(nSingle)} requests each (one run each, format 2 first); latency p50 ${s2.p50} / ${s3.p50} ms, p99 ${s2.p99} / ${s3.p99} ms (format 2 / format 3). ${within(s3.rate / s2.rate)}`,
    });
  }
  return out;
}

/** The data text of one ReceiptRecorded event of the corpus receipt. */
function eventData(root: string): string {
  return ledgerRows(receiptBodies(root, 1)).events[0][4] as string;
}
