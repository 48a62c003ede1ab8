/**
 * A coverage-PDF worker thread: renders each {@link PdfJob} it is sent with
 * {@link renderCoveragePdf} (pdfkit draws synchronously, a few hundred ms
 * for a plan of hundreds of actions) and answers one {@link PdfReply}, the
 * PDF's bytes moved, not copied. Started by {@link PdfRenderer}
 * (pdf-renderer.ts), one job at a time per thread.
 */
import { parentPort } from 'node:worker_threads';
import { CoveragePdfInput, renderCoveragePdf } from './coverage.pdf';

/** One PDF to render; `id` is echoed in the reply. */
export interface PdfJob {
  id: number;
  input: CoveragePdfInput;
}

/** The PDF's bytes, or the message of the error that stopped the render. */
export type PdfReply = { id: number; pdf: Uint8Array } | { id: number; error: string };

if (parentPort) {
  const port = parentPort;
  port.on('message', (job: PdfJob) => {
    // A throw while drawing (not only a rejection) is this render's error; the thread lives on.
    new Promise<Buffer>((resolve) => resolve(renderCoveragePdf(job.input))).then(
      (bytes) => {
        // A Buffer may be a view of a shared pool: move a buffer of its own.
        const pdf = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : Uint8Array.prototype.slice.call(bytes);
        port.postMessage({ id: job.id, pdf } satisfies PdfReply, [pdf.buffer as ArrayBuffer]);
      },
      (e: unknown) => port.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e) } satisfies PdfReply),
    );
  });
}
