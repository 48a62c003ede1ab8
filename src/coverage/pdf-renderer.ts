import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Worker } from 'node:worker_threads';
import type { AppConfig } from '../config/configuration';
import { workerScript } from '../common/package-root';
import { CoveragePdfInput, renderCoveragePdf } from './coverage.pdf';
import type { PdfJob, PdfReply } from './pdf-worker';

/** A render waiting for, or running on, a worker. */
interface Task {
  id: number;
  input: CoveragePdfInput;
  resolve: (pdf: Buffer) => void;
  reject: (e: Error) => void;
}

/**
 * Renders coverage PDFs (`GET /coverage/{id}.pdf`) on a pool of at most
 * PDF_WORKERS worker threads (pdf-worker.ts), so that drawing a PDF, which
 * pdfkit does synchronously, never holds the API's event loop: `/health` and
 * cheap reads are answered while PDFs are drawn. Threads start on the first
 * render and stay (unref'd) until shutdown; a render waits, first come first
 * served, while every thread is busy (HEAVY_READ_CONCURRENCY bounds how many
 * wait). A thread that dies fails its render and is replaced at the next one.
 * PDF_WORKERS=0, or no compiled worker script (ts-jest without a build):
 * rendered on the event loop, the same function, the same bytes.
 */
@Injectable()
export class PdfRenderer implements OnModuleDestroy {
  private readonly logger = new Logger('PdfRenderer');
  private readonly size: number;
  private readonly script: string | null;
  private readonly idle: Worker[] = [];
  private readonly running = new Map<Worker, Task>();
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(config: ConfigService<AppConfig, true>) {
    this.size = config.get('PDF_WORKERS', { infer: true });
    this.script = this.size > 0 ? workerScript(__dirname, 'pdf-worker') : null;
  }

  /** Where PDFs are drawn: `worker` threads or the `event-loop` (for tests and logs). */
  get mode(): 'worker' | 'event-loop' {
    return this.script ? 'worker' : 'event-loop';
  }

  /** Worker threads started now (at most PDF_WORKERS). */
  get threads(): number {
    return this.idle.length + this.running.size;
  }

  /** The PDF of `input` (see {@link renderCoveragePdf}). Rejects when the render fails, its thread dies, or at shutdown. */
  render(input: CoveragePdfInput): Promise<Buffer> {
    if (this.closed) return Promise.reject(new Error('the PDF renderer is closed (shutting down)'));
    if (!this.script) return renderCoveragePdf(input);
    return new Promise<Buffer>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, input, resolve, reject });
      this.dispatch();
    });
  }

  /** Hand queued renders to idle threads, starting threads up to PDF_WORKERS. */
  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let w = this.idle.pop();
      if (!w) {
        if (this.threads >= this.size) return;
        w = this.start(this.script!);
      }
      const task = this.queue.shift()!;
      this.running.set(w, task);
      try {
        w.postMessage({ id: task.id, input: task.input } satisfies PdfJob);
      } catch (e) {
        // Input that cannot be sent to a thread (never for a report read from the ledger): this render fails alone.
        this.running.delete(w);
        this.idle.push(w);
        task.reject(e as Error);
      }
    }
  }

  private start(script: string): Worker {
    const w = new Worker(script);
    w.unref(); // never keeps the process alive
    w.on('message', (m: PdfReply) => {
      const task = this.running.get(w);
      if (!task || task.id !== m.id) return;
      this.running.delete(w);
      this.idle.push(w);
      if ('error' in m) task.reject(new Error(`coverage PDF render failed: ${m.error}`));
      else task.resolve(Buffer.from(m.pdf.buffer, m.pdf.byteOffset, m.pdf.byteLength));
      this.dispatch();
    });
    const gone = (e: Error): void => {
      const task = this.running.get(w);
      this.running.delete(w);
      const i = this.idle.indexOf(w);
      if (i >= 0) this.idle.splice(i, 1);
      task?.reject(e);
      this.dispatch(); // a replacement thread for what waits
    };
    w.on('error', (e) => {
      this.logger.error(`PDF worker failed: ${e.message}`);
      gone(e);
    });
    w.on('exit', (code) => gone(new Error(`PDF worker exited (${code})`)));
    return w;
  }

  /** Stop the threads: renders running or waiting reject; later calls reject at once. */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    const waiting = this.queue.splice(0);
    for (const t of waiting) t.reject(new Error('the PDF renderer is closed (shutting down)'));
    const all = [...this.idle, ...this.running.keys()];
    await Promise.all(all.map((w) => w.terminate()));
  }
}
