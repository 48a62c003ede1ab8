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

/** A read connection and how to close it. */
interface Connection {
  q: Queryable;
  close(): Promise<void>;
}

async function open(data: LeafWorkerData): Promise<Connection> {
  if (data.dialect === 'sqlite') {
    const Database = (await import('better-sqlite3')).default;
    const { sqliteTx } = await import('../database/scratch');
    const db = new Database(data.file, { readonly: true, fileMustExist: true, timeout: 10_000 });
    return { q: sqliteTx(db), close: async () => void db.close() };
  }
  const { Client } = await import('pg');
  const { toPostgresPlaceholders } = await import('../database/rows');
  // Bounded waits: a database that does not answer fails this run (the signer tries again next tick), never hangs it.
  const client = new Client({ connectionString: data.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, statement_timeout: STATEMENT_TIMEOUT_MS });
  client.on('error', () => undefined); // a dropped connection fails the query in flight; the next request opens a new one
  try {
    await client.connect();
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
  return {
    q: { query: async <T>(sql: string, params: unknown[] = []) => (await client.query(toPostgresPlaceholders(sql), params)).rows as T[] },
    close: () => client.end().catch(() => undefined),
  };
}

/** PostgreSQL: connecting, and any one read, give up after these (ms). */
const CONNECT_TIMEOUT_MS = 10_000;
const STATEMENT_TIMEOUT_MS = 120_000;

if (parentPort) {
  const port = parentPort;
  // Opened at the first request. After any failure (the open, a read, a dropped connection) it is closed and
  // dropped, so the next request opens a new one: the signer recovers once the database answers again.
  let conn: Promise<Connection> | null = null;
  port.on('message', (req: LeafWorkerRequest) => {
    void (async () => {
      let reply: LeafWorkerReply;
      const mine = (conn ??= open(workerData as LeafWorkerData));
      try {
        // Buffers arrive as Uint8Arrays.
        const edge = req.edge.map((h) => Buffer.from(h.buffer, h.byteOffset, h.byteLength));
        reply = { id: req.id, result: await recomputeLeaves((await mine).q, { from: req.from, to: req.to, edge, prevHash: req.prevHash }) };
      } catch (e) {
        if (conn === mine) conn = null;
        void mine.then((c) => c.close()).catch(() => undefined);
        reply = { id: req.id, error: (e as Error).message };
      }
      port.postMessage(reply);
    })();
  });
}
