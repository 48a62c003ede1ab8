/**
 * Figure: inclusion and consistency proofs served over HTTP by the running
 * application (`node dist/src/main.js`, SQLite file), from a log of 1,000,000
 * leaves against the same from a log of 10,000 (issue 14: within 3x, i.e.
 * O(log n) stored-node reads, never a scan). Each log is written straight
 * into the application's tables (the RFC 6962 nodes of synthetic leaves, and
 * a checkpoint signed with the log key the app is started with); the app
 * then serves `/api/ledger/proof/inclusion` and `/api/ledger/proof/consistency`
 * for random indexes and sizes, one request at a time, and each answer is
 * checked against the signed root.
 */
import Database from 'better-sqlite3';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { checkpointNoteText, leafHash, signNote, TreeIntegrator, verifyConsistency, verifyInclusion } from '../src/core/tlog';
import { createSigningKeyFile } from '../src/log/log-key';
import { startApp } from './lib/app';
import { createDb, migrate } from './lib/db';
import { BenchContext, FigureResult } from './lib/figure';
import { fmt, median, pct } from './lib/measure';

export const PROOF_RATIO_TARGET = 3;
const ORIGIN = 'bench.test/aer1';

interface Served {
  size: number;
  inclusionMs: number;
  consistencyMs: number;
}

async function serveLog(ctx: BenchContext, size: number, requests: number): Promise<Served> {
  const db = await createDb('sqlite', ctx.tmp, ctx.pgAdminUrl);
  await migrate(db);
  const keyFile = join(ctx.tmp, `log-${size}.key`);
  const signer = createSigningKeyFile(keyFile, ORIGIN);
  ctx.log(`proofs: writing a log of ${fmt(size)} leaves`);
  const tree = TreeIntegrator.empty();
  const sqlite = new Database(db.file!);
  const insert = sqlite.prepare('INSERT INTO tree_nodes (level, idx, hash) VALUES (?, ?, ?)');
  const roots = new Map<number, Buffer>();
  const leafHashes: Buffer[] = [];
  const write = sqlite.transaction((leaves: Buffer[]) => {
    const r = tree.appendLeaves(leaves);
    for (let i = 0; i < r.nodes.count; i++) insert.run(r.nodes.levels[i], r.nodes.indexes[i], Buffer.from(r.nodes.hash(i)));
  });
  for (let i = 0; i < size; i += 10_000) {
    const leaves = Array.from({ length: Math.min(10_000, size - i) }, (_, k) => Buffer.from(`bench leaf ${i + k}`));
    for (const l of leaves) if (leafHashes.length < 50_000) leafHashes.push(leafHash(l));
    write(leaves);
  }
  roots.set(size, tree.root());
  const note = signNote(checkpointNoteText({ origin: ORIGIN, size, rootHash: tree.root(), extensions: [] }), [signer]);
  sqlite.prepare('INSERT INTO checkpoints (size, root, note, signed_at) VALUES (?, ?, ?, ?)').run(size, tree.root().toString('base64'), note, new Date().toISOString());
  sqlite.close();
  const app = await startApp(ctx.root, db, { LEDGER_SIGNING_KEY_FILE: keyFile, LEDGER_ORIGIN: ORIGIN, VERIFY_RATE_LIMIT: '100000000', CHECKPOINT_INTERVAL_MS: '3600000' });
  try {
    const root = tree.root();
    const get = async (path: string): Promise<{ ms: number; body: { proof: string[]; leaf_hash?: string } }> => {
      const t0 = performance.now();
      const r = await fetch(`${app.base}${path}`);
      const body = (await r.json()) as { proof: string[]; leaf_hash?: string };
      const ms = performance.now() - t0;
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body).slice(0, 200)}`);
      return { ms, body };
    };
    const inc: number[] = [];
    const con: number[] = [];
    for (let k = 0; k < requests; k++) {
      const index = randomInt(0, Math.min(size, leafHashes.length));
      const r = await get(`/api/ledger/proof/inclusion?index=${index}&tree_size=${size}`);
      verifyInclusion(index, size, leafHashes[index], r.body.proof.map((h) => Buffer.from(h, 'base64')), root);
      inc.push(r.ms);
      const first = randomInt(1, size);
      const c = await get(`/api/ledger/proof/consistency?first=${first}&second=${size}`);
      if (c.body.proof.length === 0 || c.body.proof.length > 64) throw new Error(`consistency proof of ${c.body.proof.length} hashes`);
      con.push(c.ms);
    }
    // One consistency proof checked end to end against both roots (the prefix root recomputed from the leaves).
    const small = 1000;
    const prefix = TreeIntegrator.empty();
    prefix.appendLeaves(Array.from({ length: small }, (_, k) => Buffer.from(`bench leaf ${k}`)));
    const c = await get(`/api/ledger/proof/consistency?first=${small}&second=${size}`);
    verifyConsistency(small, size, c.body.proof.map((h) => Buffer.from(h, 'base64')), prefix.root(), root);
    return { size, inclusionMs: median(inc), consistencyMs: median(con) };
  } finally {
    await app.stop();
  }
}

export async function benchTlogProofs(ctx: BenchContext): Promise<FigureResult> {
  const big = ctx.quick ? 100_000 : 1_000_000;
  const requests = ctx.quick ? 100 : 300;
  const small = await serveLog(ctx, 10_000, requests);
  const large = await serveLog(ctx, big, requests);
  const ratio = Math.max(large.inclusionMs / small.inclusionMs, large.consistencyMs / small.consistencyMs);
  const met = ratio <= PROOF_RATIO_TARGET;
  return {
    figure: `inclusion + consistency proofs over HTTP, ${fmt(big)} vs 10,000 leaves`,
    value: large.inclusionMs,
    unit: 'ms (median inclusion proof)',
    reference: { what: 'the same requests on a log of 10,000 leaves', value: small.inclusionMs, unit: 'ms' },
    ratio,
    target: `<= ${PROOF_RATIO_TARGET}x the 10,000-leaf latency`,
    met,
    note:
      `${requests} random inclusion and ${requests} random consistency proofs per log, one request at a time, each inclusion proof checked against the signed root; ` +
      `medians: inclusion ${large.inclusionMs.toFixed(2)} ms vs ${small.inclusionMs.toFixed(2)} ms, consistency ${large.consistencyMs.toFixed(2)} ms vs ${small.consistencyMs.toFixed(2)} ms; ` +
      `ratio shown is the worse of the two. ` +
      (met ? 'Target met.' : `Target missed (${ratio.toFixed(2)}x > ${PROOF_RATIO_TARGET}x).`),
    details: { 'inclusion ratio': (large.inclusionMs / small.inclusionMs).toFixed(2), 'consistency ratio': (large.consistencyMs / small.consistencyMs).toFixed(2), 'large log': fmt(big), ratio: pct(ratio / PROOF_RATIO_TARGET) },
  };
}
