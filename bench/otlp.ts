/**
 * Figure `otlp` (issue 31): OpenTelemetry spans into the ledger over
 * OTLP/HTTP, `POST /v1/traces` with protobuf requests of 512 `execute_tool`
 * spans (the OpenTelemetry SDKs' default export batch), each span with a
 * tool result, on SQLite and on PostgreSQL, the application running as
 * `npm start` runs it. Reference: the NDJSON receipt batch (figure 4's
 * `POST /api/receipts/batch`, 1,000 receipts a request) of the same number of
 * records in the same run, alternating, the best of each.
 */
import { randomBytes } from 'node:crypto';
import { createKey, startApp } from './lib/app';
import { BenchContext, FigureResult } from './lib/figure';
import { countEvents, createDb, Dialect } from './lib/db';
import { fmt, now, pct, shortfall } from './lib/measure';
import { receiptBodies } from './lib/receipts';
import { batch as ndjsonBatch } from './ingest';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

/** OTLP spans per second against the NDJSON receipt batch rate of the same run (issue 31). */
export const OTLP_TARGET = 0.5;
/** Spans per request: the OpenTelemetry SDKs' default OTEL_BSP_MAX_EXPORT_BATCH_SIZE. */
const PER_REQUEST = 512;
const REPS = 3;

/** `requests` protobuf ExportTraceServiceRequests of {@link PER_REQUEST} tool-call spans, each request one job. */
export function requests(n: number): Buffer[] {
  const out: Buffer[] = [];
  const start = BigInt(Date.now()) * 1_000_000n;
  for (let r = 0; r < n; r++) {
    const trace = randomBytes(16);
    const spans = Array.from({ length: PER_REQUEST }, (_, k) => ({
      traceId: trace,
      spanId: randomBytes(8),
      name: 'execute_tool fetch_customer',
      kind: 1,
      startTimeUnixNano: String(start + BigInt(k) * 1000n),
      endTimeUnixNano: String(start + BigInt(k) * 1000n + 500n),
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } },
        { key: 'gen_ai.tool.name', value: { stringValue: 'fetch_customer' } },
        { key: 'aer1.job_id', value: { stringValue: `bench-otlp-${trace.toString('hex')}` } },
        { key: 'gen_ai.tool.call.result', value: { stringValue: JSON.stringify({ customer: k, name: 'Ada Lovelace', status: 'active', limits: { daily: 1000, monthly: 20000 } }) } },
      ],
    }));
    out.push(Buffer.from(Request.encode(Request.fromObject({ resourceSpans: [{ scopeSpans: [{ spans }] }] })).finish()));
  }
  return out;
}

async function otlpRun(ctx: BenchContext, dialect: Dialect, bodies: Buffer[]): Promise<{ rate: number; seconds: number; p50: number; p99: number }> {
  const db = await createDb(dialect, ctx.tmp, ctx.pgAdminUrl);
  try {
    const key = await createKey(ctx.root, db, 'producer');
    const app = await startApp(ctx.root, db);
    try {
      const post = async (body: Buffer): Promise<void> => {
        const r = await fetch(`${app.base}/v1/traces`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' }, body });
        const answer = Buffer.from(await r.arrayBuffer());
        if (r.status !== 200 || answer.length !== 0) throw new Error(`OTLP export answered ${r.status} with ${answer.length} bytes: ${answer.toString('utf8').slice(0, 300)}`);
      };
      await post(requests(1)[0]); // warm-up (not counted)
      const times: number[] = [];
      const t0 = now();
      for (const b of bodies) {
        const t = now();
        await post(b);
        times.push((now() - t) * 1000);
      }
      const seconds = now() - t0;
      const spans = bodies.length * PER_REQUEST;
      // Each span: its receipt and its timeline entry (two events); the warm-up request's too.
      const events = await countEvents(db);
      if (events !== 2 * (spans + PER_REQUEST)) throw new Error(`OTLP: ${events} events for ${spans + PER_REQUEST} spans`);
      times.sort((x, y) => x - y);
      const at = (q: number): number => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]);
      return { rate: spans / seconds, seconds, p50: at(0.5), p99: at(0.99) };
    } finally {
      await app.stop();
    }
  } finally {
    await db.drop();
  }
}

export async function benchOtlp(ctx: BenchContext): Promise<FigureResult[]> {
  const nRequests = ctx.quick ? 10 : 100;
  const spans = nRequests * PER_REQUEST;
  const out: FigureResult[] = [];
  for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
    const name = dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const bodies = requests(nRequests);
    const receipts = receiptBodies(ctx.root, spans);
    const reps = Math.min(ctx.reps, REPS);
    let o = { rate: 0, seconds: Infinity, p50: 0, p99: 0 };
    let b = { rate: 0, seconds: Infinity };
    const oRates: number[] = [];
    const bRates: number[] = [];
    for (let i = 0; i < reps; i++) {
      ctx.log(`otlp ${dialect}: HTTP NDJSON receipt batches of 1,000, ${fmt(spans)} receipts (${i + 1} of ${reps})`);
      const bi = await ndjsonBatch(ctx, dialect, receipts);
      bRates.push(bi.rate);
      if (bi.rate > b.rate) b = bi;
      ctx.log(`otlp ${dialect}: OTLP/HTTP protobuf, ${fmt(nRequests)} requests of ${PER_REQUEST} execute_tool spans (${i + 1} of ${reps})`);
      const oi = await otlpRun(ctx, dialect, bodies);
      oRates.push(oi.rate);
      if (oi.rate > o.rate) o = oi;
    }
    const ratio = o.rate / b.rate;
    const met = ratio >= OTLP_TARGET;
    out.push({
      figure: `otlp: OTLP/HTTP spans, protobuf, ${PER_REQUEST} per request, ${name}`,
      value: o.rate,
      unit: 'spans/s',
      reference: { what: 'NDJSON receipt batches of 1,000 of this run', value: b.rate, unit: 'receipts/s' },
      ratio,
      target: `>= ${pct(OTLP_TARGET)} of the NDJSON batch rate`,
      met,
      details: {
        'latency of one 512-span request, p50, ms': o.p50,
        'p99, ms': o.p99,
        'runs, alternating (best taken), NDJSON receipts/s': bRates.map((x) => fmt(Math.round(x))).join(' / '),
        'runs, alternating (best taken), OTLP spans/s': oRates.map((x) => fmt(Math.round(x))).join(' / '),
      },
      note:
        `${fmt(spans)} spans in ${fmt(nRequests)} requests (${o.seconds.toFixed(2)} s; the NDJSON batch ${b.seconds.toFixed(2)} s). Per span the service decodes it (protobufjs, the OpenTelemetry project's generated definitions), ` +
        'writes the text of its transport receipt, verifies that receipt (core; from the value its text was written from, not parsed back) and records it (an event), then builds its chain entry with the link to the one before, checked as it is built, and appends it to the job\'s timeline (a second event): two events, two read-model rows and about four tree nodes a span, where a receipt of the NDJSON batch is one event. ' +
        (met ? `Target met (${pct(ratio)} >= ${pct(OTLP_TARGET)}).` : `Target missed by ${shortfall(OTLP_TARGET, ratio)} (${pct(ratio)} < ${pct(OTLP_TARGET)}).`),
    });
  }
  return out;
}
