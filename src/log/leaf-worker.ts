/**
 * The checkpoint signer's worker thread: recomputes new leaves from the
 * events (leaf-recompute.ts) on a read connection of its own, so that the
 * reads, the event hashes and the tree hashes of a checkpoint run off the
 * API's event loop. Started by {@link LeafRecomputer} with
 * `workerData: LeafWorkerData`; answers each {@link LeafWorkerRequest} with
 * one {@link LeafWorkerReply}.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Queryable } from '../database/rows';
import { recomputeLeaves, RecomputeRequest, RecomputeResult } from './leaf-recompute';

/** Where the worker reads: a SQLite file (opened read-only) or a PostgreSQL URL. */
export type LeafWorkerData = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string };

export interface LeafWorkerRequest extends RecomputeRequest {
  id: number;
}

/** The result, or the read's error message (the signer then does not sign this time). */
export type LeafWorkerReply = { id: number; result: RecomputeResult } | { id: number; error: string };

async function open(data: LeafWorkerData): Promise<Queryable> {
  if (data.dialect === 'sqlite') {
    const Database = (await import('better-sqlite3')).default;
    const { sqliteTx } = await import('../database/scratch');
    return sqliteTx(new Database(data.file, { readonly: true, fileMustExist: true, timeout: 10_000 }));
  }
  const { Client } = await import('pg');
  const { toPostgresPlaceholders } = await import('../database/rows');
  const client = new Client({ connectionString: data.url });
  await client.connect();
  return { query: async <T>(sql: string, params: unknown[] = []) => (await client.query(toPostgresPlaceholders(sql), params)).rows as T[] };
}

if (parentPort) {
  const port = parentPort;
  const q = open(workerData as LeafWorkerData);
  q.catch(() => undefined); // answered per request below
  port.on('message', (req: LeafWorkerRequest) => {
    void (async () => {
      let reply: LeafWorkerReply;
      try {
        // Buffers arrive as Uint8Arrays.
        const edge = req.edge.map((h) => Buffer.from(h.buffer, h.byteOffset, h.byteLength));
        reply = { id: req.id, result: await recomputeLeaves(await q, { from: req.from, to: req.to, edge, prevHash: req.prevHash }) };
      } catch (e) {
        reply = { id: req.id, error: (e as Error).message };
      }
      port.postMessage(reply);
    })();
  });
}
