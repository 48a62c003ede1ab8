/**
 * The stream-heads figures (issue 30, "Measured"):
 *
 * 1. Signing a statement (StreamHeadsService.sign, what GET
 *    /api/ledger/stream-heads runs) for a job of 10,000 entries and 1,000
 *    receipts: the timeline stream and the 1,000 receipt streams, on
 *    PostgreSQL, in process; time and the number of database queries (one
 *    indexed read per stream plus one per 100 heads for the tree's leaves:
 *    no scan of the log).
 * 2. `aer1 log check-heads`'s pass over the leaves (checkStatements, the
 *    CLI's own code) against a local HTTP log that generates format 3
 *    leaves on the fly (so its memory does not count): time and peak RSS at
 *    two sizes, and the time extrapolated linearly to 1,000,000 leaves
 *    (extrapolated, not measured: say so wherever it is quoted).
 */
import { createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ChainEntry, entryDigest, sha256Hex, ZERO_DIGEST } from '../src/core/aer1';
import { createApp } from '../src/app.factory';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { eventHash, eventHashInput, LEDGER_GENESIS_HASH, SYSTEM } from '../src/core/ledger/event-hash';
import { checkpointNoteText, generateSignerKey, leafHash, signNote, signStreamHeads, StreamHead, TreeIntegrator } from '../src/core/tlog';
import { DatabaseService } from '../src/database/database.service';
import { LedgerService } from '../src/ledger/ledger.service';
import { streams } from '../src/ledger/streams';
import { CheckpointSigner } from '../src/log/checkpoint-signer';
import { createSigningKeyFile } from '../src/log/log-key';
import { StreamHeadsService } from '../src/log/stream-heads.service';
import { ReceiptsService } from '../src/receipts/receipts.service';
import { checkStatements } from '../src/cli/commands/log-heads';
import { createDb } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt } from './lib/measure';
import { receiptBodies } from './lib/receipts';

const JOB = 'bench-heads-job';

async function benchSigning(ctx: BenchContext, entries: number, receipts: number): Promise<{ ms: number; queries: number; streams: number; bytes: number }> {
  const db = await createDb('postgres', ctx.tmp, ctx.pgAdminUrl);
  const keyFile = join(ctx.tmp, `heads-${entries}.key`);
  createSigningKeyFile(keyFile, 'bench.heads');
  const app = await createApp({ ...process.env, DATABASE_URL: db.url, LEDGER_SIGNING_KEY_FILE: keyFile, LOG_LEVEL: 'silent', CHECKPOINT_INTERVAL_MS: '3600000', PUBLIC_BASE_URL: 'http://127.0.0.1:1' });
  try {
    await app.init();
    ctx.log(`stream heads: seeding a job of ${fmt(entries)} entries and ${fmt(receipts)} receipts`);
    const keys = app.get(ApiKeysService);
    const by = (await keys.fromHeader(`Bearer ${(await keys.create('bench-producer', 'producer')).key}`))!;
    const ids: string[] = [];
    for (const text of receiptBodies(ctx.root, receipts)) {
      const value = JSON.parse(text) as { id: string };
      await app.get(ReceiptsService).ingest({ text, value }, by);
      ids.push(value.id.toLowerCase());
    }
    const dbs = app.get(DatabaseService);
    const ledger = app.get(LedgerService);
    const stream = streams.timeline(JOB);
    let prev = ZERO_DIGEST;
    for (let from = 1; from <= entries; from += 1000) {
      await dbs.write(async (tx) => {
        const events = [];
        for (let seq = from; seq < Math.min(from + 1000, entries + 1); seq++) {
          const e: ChainEntry = { seq, job_id: JOB, id: ids[seq % ids.length], tool: `tool_${seq % 50}`, provenance_class: 'EXECUTED BY LEDGER', canonical_bytes: Buffer.from(`{"seq":${seq}}`).toString('base64'), prev_digest: prev };
          const d = entryDigest(e) ?? sha256Hex(JSON.stringify(e));
          prev = d;
          events.push({ type: 'TimelineEntryAppended' as const, data: { job_id: JOB, seq, raw: JSON.stringify(e), entry_digest: d, receipt_id: e.id, tool: e.tool, provenance_class: e.provenance_class, close: false } });
        }
        await ledger.append(tx, stream, await ledger.streamVersion(tx, stream), events, SYSTEM);
      });
    }
    await app.get(CheckpointSigner).tick();
    await app.get(CheckpointSigner).tick();
    const svc = app.get(StreamHeadsService);
    const cp = await svc.checkpointFor();
    const names = [stream, ...ids.map((id) => streams.receipt(id))];
    let queries = 0;
    const counting = { query: <T>(sql: string, params?: unknown[]) => (queries++, dbs.query<T>(sql, params)) };
    await svc.sign(names, cp, counting); // warm
    queries = 0;
    const t0 = performance.now();
    const signed = await svc.sign(names, cp, counting);
    const ms = performance.now() - t0;
    return { ms, queries, streams: names.length, bytes: Buffer.byteLength(signed.note) };
  } finally {
    await app.close();
    await db.drop();
  }
}

/** A log of `n` format 3 leaves over 3 streams, generated in order on demand (constant memory). */
class GeneratedLog {
  private i = 0;
  private prev = LEDGER_GENESIS_HASH;
  private readonly last = new Map<string, { pos: number; n: number; hash: string }>();
  constructor(readonly n: number) {}
  reset(): void {
    this.i = 0;
    this.prev = LEDGER_GENESIS_HASH;
    this.last.clear();
  }
  nextLeaf(): Buffer {
    const position = ++this.i;
    const stream_id = `timeline:job ${position % 3}`;
    const p = this.last.get(stream_id) ?? { pos: 0, n: 0, hash: '' };
    const e = { position, prev_hash: this.prev, recorded_at: '2026-12-01T00:00:00.000Z', stream_id, stream_position: p.n + 1, type: 'TimelineEntryAppended', key_id: 'k', key_name: 'p', format: 3, data: '', stream_prev: p.pos, public_ids: '{}', payload_commitment: 'sha256:' + '0'.repeat(64) };
    this.prev = eventHash(e);
    this.last.set(stream_id, { pos: position, n: p.n + 1, hash: this.prev });
    return Buffer.from(eventHashInput(e), 'utf8');
  }
  heads(): StreamHead[] {
    return [...this.last].map(([streamId, h]) => ({ streamId, position: h.pos, eventHash: h.hash }));
  }
}

async function benchCheck(n: number): Promise<{ ms: number; peakRss: number; baseRss: number; result: string }> {
  const key = generateSignerKey('bench.heads.check');
  const gen = new GeneratedLog(n);
  const tree = TreeIntegrator.empty();
  for (let k = 0; k < n; k += 1000) tree.appendLeaves(Array.from({ length: Math.min(1000, n - k) }, () => gen.nextLeaf()));
  const root = tree.root();
  const note = signStreamHeads({ origin: key.signer.name, size: n, rootHash: root, heads: gen.heads() }, key.signer);
  const cpNote = signNote(checkpointNoteText({ origin: key.signer.name, size: n, rootHash: root, extensions: [] }), [key.signer]);
  gen.reset();
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === `/api/ledger/checkpoints/${n}`) return void res.end(cpNote);
    const start = Number(u.searchParams.get('start'));
    const count = Number(u.searchParams.get('count'));
    const leaves = [];
    for (let k = start; k < Math.min(n, start + count); k++) {
      const leaf = gen.nextLeaf();
      leaves.push({ index: k, position: k + 1, leaf: leaf.toString('base64'), leaf_hash: leafHash(leaf).toString('base64') });
    }
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ leaves }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  global.gc?.();
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  const [r] = await checkStatements(url, (await import('../src/core/tlog')).parseVerifierKey(key.verifierKey), [{ source: 'bench', note }], {});
  const ms = performance.now() - t0;
  clearInterval(sampler);
  await new Promise<void>((r2) => server.close(() => r2()));
  return { ms, peakRss, baseRss, result: r.result };
}

export async function benchStreamHeads(ctx: BenchContext): Promise<FigureResult[]> {
  const [entries, receipts] = ctx.quick ? [1_000, 100] : [10_000, 1_000];
  const s = await benchSigning(ctx, entries, receipts);
  const sizes = ctx.quick ? [10_000, 20_000] : [100_000, 200_000];
  const checks = [];
  for (const n of sizes) {
    ctx.log(`stream heads: check-heads over ${fmt(n)} generated leaves`);
    checks.push({ n, ...(await benchCheck(n)) });
  }
  const last = checks[checks.length - 1];
  const perLeafUs = (last.ms * 1000) / last.n;
  const million = (perLeafUs * 1e6) / 1e6;
  const mb = (x: number): string => (x / 1e6).toFixed(1);
  process.stdout.write(
    `\nstream heads:\n  signing a statement of ${fmt(s.streams)} streams (job of ${fmt(entries)} entries, ${fmt(receipts)} receipts, PostgreSQL): ${s.ms.toFixed(0)} ms, ${s.queries} queries, ${fmt(s.bytes)} bytes\n` +
      checks.map((c) => `  check-heads over ${fmt(c.n)} leaves: ${(c.ms / 1000).toFixed(1)} s, RSS ${mb(c.baseRss)} -> peak ${mb(c.peakRss)} MB (${c.result})`).join('\n') +
      `\n  extrapolated (not measured) to 1,000,000 leaves: ${million.toFixed(0)} s at ${perLeafUs.toFixed(1)} µs a leaf\n`,
  );
  return [
    {
      figure: `stream-heads statement, job of ${fmt(entries)} entries + ${fmt(receipts)} receipts (${fmt(s.streams)} streams)`,
      value: Math.round(s.ms),
      unit: 'ms',
      reference: null,
      ratio: null,
      target: 'no full scan of the log',
      met: s.queries <= s.streams + Math.ceil(s.streams / 100) + 2,
      note: `${s.queries} queries: two per 500 streams for their heads, one per 100 heads for the tree leaves`,
      details: { queries: s.queries, streams: s.streams, bytes: s.bytes },
    },
    {
      figure: `aer1 log check-heads over ${fmt(last.n)} leaves (streaming)`,
      value: Math.round(last.ms / 100) / 10,
      unit: 's',
      reference: null,
      ratio: null,
      target: 'constant memory; 1,000,000 leaves extrapolated',
      met: last.result === 'consistent' && last.peakRss - last.baseRss < 2 * Math.max(1, checks[0].peakRss - checks[0].baseRss) + 20e6,
      note: `peak RSS ${mb(checks[0].peakRss)} MB at ${fmt(checks[0].n)}, ${mb(last.peakRss)} MB at ${fmt(last.n)}; 1,000,000 leaves extrapolated to ${million.toFixed(0)} s (not measured)`,
      details: Object.fromEntries(checks.flatMap((c) => [[`seconds_${c.n}`, Math.round(c.ms) / 1000], [`peak_rss_mb_${c.n}`, Number(mb(c.peakRss))]])),
    },
  ];
}
