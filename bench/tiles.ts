/**
 * Figures: the log's read path as C2SP tlog-tiles (issue 32, docs/tiles.md).
 *
 * 1. One full tile (`GET /tile/0/000`, 8,192 bytes) served by the running
 *    application (`node dist/src/main.js`, SQLite file, no tile bandwidth
 *    budget) against a plain static file server (node:http reading the
 *    file from the static copy on each request, another child process),
 *    both on this machine in this run: requests/s with autocannon,
 *    CONNECTIONS connections, DURATION_S seconds each.
 * 2. The static copy's write cost: a ledger of N events (appended in
 *    process through LedgerService, one checkpoint signed) written to a
 *    fresh folder by TilesDir, the code TILES_DIR and export-tiles run:
 *    seconds, files and bytes for N, and each extrapolated linearly per
 *    1,000,000 entries (said so in the note: tiles and bundles are written
 *    per 256 entries, so the cost is linear in N).
 */
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createApp } from '../src/app.factory';
import { SYSTEM } from '../src/core/ledger/event-hash';
import { DatabaseService } from '../src/database/database.service';
import { EventsRepository } from '../src/ledger/events.repository';
import { LedgerService, NO_CONCURRENCY_CHECK } from '../src/ledger/ledger.service';
import { CheckpointSigner } from '../src/log/checkpoint-signer';
import { createSigningKeyFile } from '../src/log/log-key';
import { LogService } from '../src/log/log.service';
import { TilesDir } from '../src/log/tiles-dir';
import { startApp } from './lib/app';
import { createDb, migrate } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, now } from './lib/measure';
import { freePort, startChild, stopChild, waitForHttp } from './lib/proc';

const ORIGIN = 'bench.test/aer1';
const CONNECTIONS = 20;
const PER_MILLION = 1_000_000;

/** The static server: GET reads the file below ROOT on every request (no cache), as a plain file server does. */
const STATIC_SERVER = `
const http = require('node:http'); const fs = require('node:fs'); const path = require('node:path');
const root = process.env.ROOT;
http.createServer((req, res) => {
  const p = path.join(root, path.normalize(decodeURIComponent(req.url.split('?')[0])));
  if (!p.startsWith(root)) { res.writeHead(403); return res.end(); }
  fs.readFile(p, (err, body) => {
    if (err) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Cache-Control': 'public, max-age=31536000, immutable' });
    res.end(body);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

function rate(url: string, seconds: number): Promise<{ rps: number; bytes: number; non2xx: number; p50: number; p99: number }> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: seconds }, (err, r) => {
      if (err) return reject(err);
      resolve({ rps: r.requests.average, bytes: r.throughput.average, non2xx: r.non2xx, p50: r.latency.p50, p99: r.latency.p99 });
    });
  });
}

function folderStats(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const s = statSync(p);
    if (s.isDirectory()) {
      const sub = folderStats(p);
      files += sub.files;
      bytes += sub.bytes;
    } else {
      files++;
      bytes += s.size;
    }
  }
  return { files, bytes };
}

/** A ledger of `n` events (1,000 per append) with one checkpoint, in process; then the static copy written once, timed. */
async function buildAndWrite(ctx: BenchContext, n: number, keyFile: string, dbUrl: string, out: string): Promise<{ seconds: number; files: number; bytes: number }> {
  const app = await createApp({ ...process.env, DATABASE_URL: dbUrl, LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_ORIGIN: ORIGIN, LOG_LEVEL: 'error', NODE_ENV: 'production', CHECKPOINT_INTERVAL_MS: '3600000', PUBLIC_BASE_URL: 'http://127.0.0.1' });
  await app.init();
  try {
    const ledger = app.get(LedgerService);
    const db = app.get(DatabaseService);
    ctx.log(`tiles: appending ${fmt(n)} events`);
    for (let made = 0; made < n; made += 1000) {
      const k = Math.min(1000, n - made);
      // A public event type (its leaf is in its bundle; its projection marks nothing superseded): bundles hold real leaves.
      await db.write((tx) => ledger.append(tx, 'bench:tiles', NO_CONCURRENCY_CHECK, Array.from({ length: k }, (_, i) => ({ type: 'ReceiptCorrected', data: { id: `bench-${made + i}`, superseded_by: 'none' } })), SYSTEM));
    }
    await app.get(CheckpointSigner).tick();
    const cp = await app.get(LogService).latest();
    if (!cp || cp.size !== n) throw new Error(`the checkpoint is of size ${cp?.size ?? 'none'}, not ${n}`);
    ctx.log('tiles: writing the static copy');
    const t0 = now();
    const r = await new TilesDir(out, app.get(EventsRepository)).write(db, cp);
    const seconds = now() - t0;
    const s = folderStats(out);
    if (s.files !== r.files) throw new Error(`TilesDir reported ${r.files} files, the folder holds ${s.files}`);
    return { seconds, files: s.files, bytes: s.bytes };
  } finally {
    await app.close();
  }
}

export async function benchTiles(ctx: BenchContext): Promise<FigureResult[]> {
  const n = ctx.quick ? 20_000 : 100_000;
  const duration = ctx.quick ? 3 : 10;
  const db = await createDb('sqlite', ctx.tmp, ctx.pgAdminUrl);
  await migrate(db);
  const keyFile = join(ctx.tmp, 'tiles-log.key');
  createSigningKeyFile(keyFile, ORIGIN);
  const out = mkdtempSync(join(ctx.tmp, 'tiles-copy-'));
  const w = await buildAndWrite(ctx, n, keyFile, db.url, out);

  const api = await startApp(ctx.root, db, { LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_ORIGIN: ORIGIN, TILE_BANDWIDTH_KIB_PER_MINUTE: '0', CHECKPOINT_INTERVAL_MS: '3600000' });
  const port = await freePort();
  const server = startChild(process.execPath, ['-e', STATIC_SERVER], { cwd: ctx.root, env: { ...process.env, ROOT: out, PORT: String(port) } });
  let apiRate: Awaited<ReturnType<typeof rate>>;
  let staticRate: Awaited<ReturnType<typeof rate>>;
  try {
    const staticBase = `http://127.0.0.1:${port}`;
    await waitForHttp(`${staticBase}/tile/0/000`, server);
    const a = Buffer.from(await (await fetch(`${api.base}/tile/0/000`)).arrayBuffer());
    const b = Buffer.from(await (await fetch(`${staticBase}/tile/0/000`)).arrayBuffer());
    if (a.length !== 8192 || !a.equals(b)) throw new Error(`the API's tile/0/000 (${a.length} bytes) differs from the static copy's (${b.length} bytes)`);
    ctx.log(`tiles: ${duration} s of GET /tile/0/000 against the API, then against the static server`);
    await rate(`${api.base}/tile/0/000`, 1); // warm-up
    apiRate = await rate(`${api.base}/tile/0/000`, duration);
    await rate(`${staticBase}/tile/0/000`, 1);
    staticRate = await rate(`${staticBase}/tile/0/000`, duration);
  } finally {
    await stopChild(server);
    await api.stop();
  }
  if (apiRate.non2xx > 0 || staticRate.non2xx > 0) throw new Error(`non-2xx answers: API ${apiRate.non2xx}, static ${staticRate.non2xx}`);
  const scale = PER_MILLION / n;
  return [
    {
      figure: 'tiles: one full tile (GET /tile/0/000, 8 KiB) from the API',
      value: apiRate.rps,
      unit: 'requests/s',
      reference: { what: 'the same file from a plain static file server (node:http, readFile per request) on this machine', value: staticRate.rps, unit: 'requests/s' },
      ratio: apiRate.rps / staticRate.rps,
      target: 'reported (issue 32)',
      met: true,
      note:
        `autocannon, ${CONNECTIONS} connections, ${duration} s each, one after the other (same run, same machine); the API reads the tile's 256 nodes from SQLite and the served checkpoint per request ` +
        `(no tile bandwidth budget: TILE_BANDWIDTH_KIB_PER_MINUTE=0); latency p50/p99 API ${apiRate.p50}/${apiRate.p99} ms, static ${staticRate.p50}/${staticRate.p99} ms. ` +
        'A CDN or web server in front of the static copy (or of the API: full tiles are immutable) serves them without either.',
      details: { 'API requests/s': fmt(apiRate.rps), 'static requests/s': fmt(staticRate.rps), 'API MB/s': (apiRate.bytes / 1e6).toFixed(1), 'static MB/s': (staticRate.bytes / 1e6).toFixed(1) },
    },
    {
      figure: `tiles: static copy write cost, per 1,000,000 entries (extrapolated from ${fmt(n)})`,
      value: w.seconds * scale,
      unit: 's per 1,000,000 entries',
      reference: null,
      ratio: null,
      target: 'reported (issue 32)',
      met: true,
      note:
        `measured: ${fmt(n)} entries (public events of the system key, ${fmt(w.bytes / n)} bytes of copy per entry: its leaf, a 2-byte length and 32 bytes of leaf hash; SQLite file) written to an empty folder by TilesDir (what TILES_DIR and export-tiles run) in ${w.seconds.toFixed(2)} s: ${fmt(w.files)} files, ${fmt(w.bytes)} bytes; ` +
        `extrapolated linearly x${fmt(scale)} (tiles and bundles are per 256 entries): ${fmt(w.files * scale)} files, ${(w.bytes * scale / 1e6).toFixed(0)} MB per 1,000,000 entries. ` +
        'Each file is fsynced and renamed into place; written once as the log grows (a full tile is never rewritten), so the cost per checkpoint is that of its new entries plus its partial tiles.',
      details: { entries: fmt(n), seconds: w.seconds.toFixed(2), files: fmt(w.files), bytes: fmt(w.bytes), 'files per 1M': fmt(w.files * scale), 'MB per 1M': (w.bytes * scale / 1e6).toFixed(0) },
    },
  ];
}
