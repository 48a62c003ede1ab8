/**
 * The coverage-PDF worker pool (src/coverage/pdf-renderer.ts): PDFs drawn on
 * worker threads are the bytes drawn on the event loop; renders beyond
 * PDF_WORKERS wait for a thread, none is lost; PDF_WORKERS=0 draws on the
 * loop; after shutdown a render is refused. Uses the compiled worker script
 * (dist/, built by `npm test`).
 */
import { ConfigService } from '@nestjs/config';
import type { AppConfig } from '../../src/config/configuration';
import { renderCoveragePdf, CoveragePdfInput } from '../../src/coverage/coverage.pdf';
import { PdfRenderer } from '../../src/coverage/pdf-renderer';
import { reportDigest } from '../../src/core/coverage/reconcile';
import { fiveActionReport, manyActionReport } from './picture-fixtures';

const config = (workers: number): ConfigService<AppConfig, true> => ({ get: (k: string) => (k === 'PDF_WORKERS' ? workers : undefined) }) as unknown as ConfigService<AppConfig, true>;

function input(many: boolean): CoveragePdfInput {
  const report = many ? manyActionReport(500) : fiveActionReport();
  // issued_at fixes the PDF's creation date, so two renders give the same bytes.
  return { report, digest: reportDigest(report), digest_verified: true, report_id: '7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', issued_at: '2026-10-01T12:00:00.000Z', url: 'https://ledger.example/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', position: 101 };
}

describe('PdfRenderer', () => {
  jest.setTimeout(120_000);

  it('two threads, five renders at once: each is the PDF drawn on the event loop, byte for byte', async () => {
    const pool = new PdfRenderer(config(2));
    try {
      expect(pool.mode).toBe('worker');
      const inputs = [input(true), input(false), input(true), input(false), input(false)];
      const expected = await Promise.all(inputs.map((i) => renderCoveragePdf(i)));
      const got = await Promise.all(inputs.map((i) => pool.render(i)));
      expect(pool.threads).toBe(2);
      got.forEach((g, k) => {
        expect(Buffer.isBuffer(g)).toBe(true);
        expect(g.equals(expected[k])).toBe(true);
      });
      expect(got[0].length).toBeGreaterThan(got[1].length);
    } finally {
      await pool.onModuleDestroy();
    }
    await expect(pool.render(input(false))).rejects.toThrow('closed');
  });

  it('PDF_WORKERS=0 draws on the event loop and starts no thread', async () => {
    const pool = new PdfRenderer(config(0));
    expect(pool.mode).toBe('event-loop');
    const bytes = await pool.render(input(false));
    expect(bytes.equals(await renderCoveragePdf(input(false)))).toBe(true);
    expect(pool.threads).toBe(0);
    await pool.onModuleDestroy();
  });

  it('a render that fails in its thread fails alone; the thread serves the next one', async () => {
    const pool = new PdfRenderer(config(1));
    try {
      const bad = { ...input(false), report: { ...input(false).report, subject: null } } as unknown as CoveragePdfInput;
      await expect(pool.render(bad)).rejects.toThrow('coverage PDF render failed');
      const ok = await pool.render(input(false));
      expect(ok.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      expect(pool.threads).toBe(1);
    } finally {
      await pool.onModuleDestroy();
    }
  });
});
