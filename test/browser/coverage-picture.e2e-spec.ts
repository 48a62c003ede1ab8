/**
 * The coverage picture in a real browser (headless Chromium via
 * playwright-core): the coverage page rendered for a plan of 5 actions and
 * one of 500, at desktop and phone width. `WRITE_DOCS_IMG=1` writes the
 * screenshots to docs/img/ (the ones the docs show); otherwise to a
 * temporary folder.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { renderCoveragePage } from '../../src/coverage/coverage.page';
import type { StoredReport } from '../../src/coverage/coverage.service';
import { reportDigest } from '../../src/core/coverage/reconcile';
import type { CoverageReportContent } from '../../src/core/coverage/types';
import { fiveActionReport, manyActionReport } from '../coverage/picture-fixtures';

function stored(report: CoverageReportContent): StoredReport {
  return { report_id: '7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', url: 'http://localhost:3000/coverage/7d0e3f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6', issued_at: '2026-10-01T12:00:00.000Z', digest: reportDigest(report), digest_verified: true, position: 101, issued_by: null, report };
}

const OUT = process.env.WRITE_DOCS_IMG === '1' ? join(__dirname, '../../docs/img') : mkdtempSync(join(tmpdir(), 'aer1-picture-'));

(SKIP_BROWSER ? describe.skip : describe)('coverage picture in a real browser', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  const cases = [
    { name: '5', report: fiveActionReport, rows: 6 },
    { name: '500', report: () => manyActionReport(500), rows: 501 },
  ];
  const widths = [
    { name: 'desktop', width: 1280, height: 900 },
    { name: 'phone', width: 390, height: 844 },
  ];
  for (const c of cases)
    for (const w of widths) {
      it(`${c.name} actions at ${w.name} width: the picture is drawn, scrolls inside its box, the page does not overflow`, async () => {
        const page = await browser.newPage({ viewport: { width: w.width, height: w.height }, deviceScaleFactor: 1 });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(String(e)));
        await page.setContent(renderCoveragePage(stored(c.report())), { waitUntil: 'load' });
        const svg = page.locator('.picture svg');
        expect(await svg.count()).toBe(1);
        expect(await page.locator('.picture svg g.row').count()).toBe(c.rows);
        const box = await svg.boundingBox();
        expect(box!.width).toBeGreaterThan(600);
        // The page body does not scroll sideways: the picture's own box does.
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
        expect(overflow).toBeLessThanOrEqual(1);
        const pic = await page.locator('.picture').boundingBox();
        expect(pic!.width).toBeLessThanOrEqual(w.width);
        expect(await page.locator('#checkpoint').innerText()).toBe('not yet proven against a signed checkpoint');
        // Escaped: the action id with markup is text, no element was made of it.
        if (c.name === '5') {
          expect(await page.locator('.picture svg').innerHTML()).toContain('notify&lt;script&gt;');
          expect(await page.locator('script').count()).toBe(0);
        }
        // Show the first row that is not covered (the 500-action picture scrolls inside its box).
        await page.locator('.picture g.row[data-status="missing"]').first().scrollIntoViewIfNeeded();
        const shot = join(OUT, `coverage-picture-${c.name}-${w.name}.png`);
        await page.locator('.picture').screenshot({ path: shot });
        expect(statSync(shot).size).toBeGreaterThan(5_000);
        expect(errors).toEqual([]);
        process.stdout.write(`screenshot: ${shot}\n`);
        await page.close();
      }, 60_000);
    }
});
