import { Logger } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { workerScript } from '../common/package-root';
import type { Queryable } from '../database/rows';
import { recomputeLeaves, RecomputeRequest, RecomputeResult } from './leaf-recompute';
import type { LeafWorkerData, LeafWorkerReply } from './leaf-worker';

/**
 * Runs the signer's leaf recomputation ({@link recomputeLeaves}) in a worker
 * thread with its own read connection when the database can be opened from
 * another connection (a SQLite file, PostgreSQL), else on the event loop
 * over `fallback` (an in-memory SQLite database; no compiled worker script,
 * as under ts-jest without a build). Either way the answer is the same
 * function's over the same committed rows.
 */
export class LeafRecomputer {
  private readonly logger = new Logger('CheckpointSigner');
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (r: RecomputeResult) => void; reject: (e: Error) => void }>();
  private readonly script: string | null;
  private closed = false;

  /** `target` null: always on the event loop. */
  constructor(
    private readonly target: LeafWorkerData | null,
    private readonly fallback: Queryable,
  ) {
    this.script = target ? workerScript(__dirname, 'leaf-worker') : null;
  }

  /** Where recomputations run: `worker` or `event-loop` (for tests and logs). */
  get mode(): 'worker' | 'event-loop' {
    return this.script ? 'worker' : 'event-loop';
  }

  /** Recompute `req` (see {@link recomputeLeaves}). Rejects when the read fails or the worker dies. */
  recompute(req: RecomputeRequest): Promise<RecomputeResult> {
    if (this.closed) return Promise.reject(new Error('the leaf recomputer is closed (shutting down)'));
    if (!this.script || !this.target) return recomputeLeaves(this.fallback, req, () => new Promise<void>((r) => setImmediate(r)));
    const w = this.started(this.script, this.target);
    const id = this.nextId++;
    return new Promise<RecomputeResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.postMessage({ id, ...req });
    });
  }

  private started(script: string, target: LeafWorkerData): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(script, { workerData: target });
    w.unref(); // never keeps the process alive
    w.on('message', (m: LeafWorkerReply) => {
      const p = this.waiting.get(m.id);
      if (!p) return;
      this.waiting.delete(m.id);
      if ('error' in m) return p.reject(new Error(m.error));
      const r = m.result;
      p.resolve(r.ok ? { ...r, edge: r.edge.map(asBuffer), root: asBuffer(r.root) } : r);
    });
    const fail = (e: Error): void => {
      if (this.worker === w) this.worker = null; // the next call starts a new one
      for (const p of this.waiting.values()) p.reject(e);
      this.waiting.clear();
    };
    w.on('error', (e) => {
      this.logger.error(`leaf worker failed: ${e.message}`);
      fail(e);
    });
    w.on('exit', (code) => fail(new Error(`leaf worker exited (${code})`)));
    this.worker = w;
    return w;
  }

  /** Stop the worker (pending calls reject); later calls reject at once, starting no worker. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}

/** A Buffer over the bytes of a Uint8Array that crossed threads. */
function asBuffer(h: Uint8Array): Buffer {
  return Buffer.from(h.buffer, h.byteOffset, h.byteLength);
}
