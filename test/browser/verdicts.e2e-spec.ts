/**
 * Verdicts at the top (issue 27), in a real browser (headless Chromium via
 * playwright-core) at desktop (1280x900) and phone (390x844) width, over the
 * README's job-pay-7 (examples/outcomes): the report issued after the
 * payment was confirmed (full coverage), the one issued after it was charged
 * back (outcome contradicted), and the receipt page of a failed call.
 * `SHOTS_DIR=...` keeps the full-page screenshots there; otherwise they go
 * to a temporary folder.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';

const example = (f: string): string => readFileSync(join(__dirname, '../../examples', f), 'utf8');
const OUT = process.env.SHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'aer1-verdicts-'));

/** Computed colour, font size and box of the element `sel` on `page`. */
async function look(page: Page, sel: string): Promise<{ color: string; fontSize: number; y: number; height: number }> {
  const l = page.locator(sel).first();
  const box = (await l.boundingBox())!;
  const style = await l.evaluate((el) => {
    const cs = (globalThis as unknown as { getComputedStyle(e: unknown): { color: string; fontSize: string } }).getComputedStyle(el);
    return { color: cs.color, fontSize: parseFloat(cs.fontSize) };
  });
  return { ...style, y: box.y, height: box.height };
}

/** The `::before` content of `sel` (the status glyph the stylesheet adds). */
async function glyph(page: Page, sel: string): Promise<string> {
  return page.locator(sel).first().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown, p: string): { content: string } }).getComputedStyle(el, '::before').content);
}

const RED = 'rgb(207, 34, 46)';
const GREEN = 'rgb(26, 127, 55)';

(SKIP_BROWSER ? describe.skip : describe)('verdicts at the top in a real browser (issue 27)', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const ids = { full: '', contradicted: '' };

  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const post = (path: string, body: string, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(body);
    const payments = (await t.app.get(ApiKeysService).create('payments-ledger', 'outcome', { systems: ['PAYMENTS'] })).key;
    expect((await post('/api/plans', example('outcomes/plan.json'), t.keys.compliance)).status).toBe(201);
    for (const l of example('outcomes/receipts.ndjson').split('\n').filter(Boolean)) expect((await post('/api/receipts', l, t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/entries', example('outcomes/timeline.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/jobs/job-pay-7/commitments', example('outcomes/commitment.json'), t.keys.producer)).status).toBe(201);
    expect((await post('/api/outcomes', example('outcomes/outcome-settled.json'), payments)).status).toBe(201);
    const full = await post('/api/coverage-reports', JSON.stringify({ job_id: 'job-pay-7' }), t.keys.auditor);
    expect([full.status, full.body.result]).toEqual([201, 'full_coverage']);
    ids.full = full.body.report_id;
    expect((await post('/api/outcomes', example('outcomes/outcome-reversed.json'), payments)).status).toBe(201);
    const after = await post('/api/coverage-reports', JSON.stringify({ job_id: 'job-pay-7' }), t.keys.auditor);
    expect([after.status, after.body.result]).toEqual([201, 'findings']);
    ids.contradicted = after.body.report_id;
    expect((await post('/api/receipts', example('receipt-transport-provider-failure.json'), t.keys.producer)).status).toBe(201);
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const widths = [
    { name: 'desktop', width: 1280, height: 900 },
    { name: 'phone', width: 390, height: 844 },
  ];

  for (const w of widths) {
    it(`${w.name}: the full-coverage report is green and its payment row says covered`, async () => {
      const page = await browser.newPage({ viewport: { width: w.width, height: w.height } });
      expect((await page.goto(`${base}/coverage/${ids.full}`))?.status()).toBe(200);
      expect(await page.locator('#verdict-line').innerText()).toBe('✓ Coverage: FULL (2/2 expected actions covered)');
      expect((await look(page, '#verdict-line')).color).toBe(GREEN);
      expect(await page.locator('#action-pay td.s-covered').innerText()).toBe('covered');
      expect(await glyph(page, '#action-pay td.s-covered')).toBe('"✓\u00a0"');
      expect((await look(page, '#action-pay td.s-covered')).color).toBe(GREEN);
      expect(await page.locator('.picture g.row[data-outcome]').count()).toBe(0);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
      const shot = join(OUT, `coverage-full-${w.width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      await page.close();
    }, 60_000);

    it(`${w.name}: the charged-back payment is named in the headline above the fold; its row and picture node say CONTRADICTED in red`, async () => {
      const page = await browser.newPage({ viewport: { width: w.width, height: w.height } });
      expect((await page.goto(`${base}/coverage/${ids.contradicted}`))?.status()).toBe(200);
      const head = await look(page, '#verdict-line');
      expect(await page.locator('#verdict-line').innerText()).toBe('✗ Coverage: 1 FINDING: pay: outcome CONTRADICTED (PAYMENTS reports reversed) (2/2 expected actions covered)');
      expect(head.color).toBe(RED);
      // The finding is read without scrolling.
      expect(head.y + head.height).toBeLessThan(w.height);
      // The table: the payment's status cell is red words, no green "covered" in its row.
      const cell = page.locator('#action-pay td.s-outcome');
      expect(await cell.innerText()).toMatch(/^outcome CONTRADICTED\s+the call is recorded \(covered by its receipt\); PAYMENTS reports reversed$/);
      expect(await glyph(page, '#action-pay td.s-outcome')).toBe('"✗\u00a0"');
      expect((await look(page, '#action-pay td.s-outcome')).color).toBe(RED);
      expect(await page.locator('#action-pay .s-covered').count()).toBe(0);
      expect(await page.locator('#action-lookup td.s-covered').count()).toBe(1);
      // The picture: the payment's row label is red "✗ CONTRADICTED"; no green mark on its row.
      const row = page.locator('.picture g.row[data-outcome="contradicted"]');
      expect(await row.count()).toBe(1);
      expect(await row.locator('text').nth(1).textContent()).toBe('✗ CONTRADICTED');
      expect(await row.locator('text').nth(1).getAttribute('fill')).toBe('#cf222e');
      expect(await page.locator('.picture svg').innerHTML()).not.toContain('seq 2: accepted evidence, succeeded');
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
      const shot = join(OUT, `coverage-contradicted-${w.width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      await page.close();
    }, 60_000);

    it(`${w.name}: a failed call's receipt page leads with the failure, in red and larger than the commitment's validity`, async () => {
      const page = await browser.newPage({ viewport: { width: w.width, height: w.height } });
      expect((await page.goto(`${base}/run/4e5e4a26-3286-5ef9-b758-8aefd9f610a5`))?.status()).toBe(200);
      expect(await page.locator('#verdict .line').first().getAttribute('id')).toBe('execution-outcome');
      const failed = await look(page, '#execution-outcome');
      const valid = await look(page, '#verdict-line');
      expect(await page.locator('#execution-outcome').innerText()).toBe('✗ Execution outcome: FAILED (provider_unavailable)');
      expect(failed.color).toBe(RED);
      expect(failed.fontSize).toBeGreaterThan(valid.fontSize);
      expect(failed.y).toBeLessThan(valid.y);
      expect(failed.y + failed.height).toBeLessThan(w.height);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
      const shot = join(OUT, `receipt-failed-${w.width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      await page.close();
    }, 60_000);

    it(`${w.name}: the charged-back payment's receipt page leads with the reversal, red and largest; the receipt's own "ok" is second, as its claim, never green`, async () => {
      const page = await browser.newPage({ viewport: { width: w.width, height: w.height } });
      expect((await page.goto(`${base}/run/81f7a3a2-7faf-5ab1-b9f7-dbe9cbaf4630`))?.status()).toBe(200);
      expect(await page.locator('#verdict').first().locator('.line').evaluateAll((ls) => ls.map((l) => (l as unknown as { id: string }).id))).toEqual(['outcome-verdict', 'execution-outcome', 'verdict-line', 'declared-verification-status']);
      expect(await page.locator('#outcome-verdict').innerText()).toBe('✗ Outcome: REVERSED by PAYMENTS (payment.settled), observed 2026-10-03T08:15:00Z');
      expect(await page.locator('#outcome-verdict a').getAttribute('href')).toBe('/outcome/2b7c81dd-4ff4-5ed7-aa5b-c1a7add87e37');
      const reversed = await look(page, '#outcome-verdict');
      const claim = await look(page, '#execution-outcome');
      expect(reversed.color).toBe(RED);
      expect((await look(page, '#outcome-verdict a')).color).toBe(RED); // the linked words too, not link blue
      expect(claim.color).not.toBe(GREEN);
      expect(reversed.fontSize).toBeGreaterThan(claim.fontSize);
      expect(reversed.y).toBeLessThan(claim.y);
      expect(reversed.y + reversed.height).toBeLessThan(w.height);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0);
      const shot = join(OUT, `receipt-reversed-${w.width}.png`);
      await page.screenshot({ path: shot, fullPage: false });
      expect(statSync(shot).size).toBeGreaterThan(10_000);
      await page.goto(`${base}/jobs/job-pay-7`);
      expect(await page.locator('#verdict .line').first().getAttribute('id')).toBe('outcome-verdict');
      expect((await look(page, '#outcome-verdict')).color).toBe(RED);
      await page.screenshot({ path: join(OUT, `job-reversed-${w.width}.png`), fullPage: false });
      await page.close();
    }, 60_000);
  }

  it('the two reports as PDFs, kept beside the screenshots (pdftoppm renders them)', async () => {
    for (const [name, id] of [['coverage-full', ids.full], ['coverage-contradicted', ids.contradicted]]) {
      const r = await page(`/coverage/${id}.pdf`);
      expect(r.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      writeFileSync(join(OUT, `${name}.pdf`), r);
    }
  }, 60_000);

  /** The bytes of a GET (the PDF). */
  async function page(path: string): Promise<Buffer> {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  }

  afterAll(() => process.stdout.write(`issue 27 screenshots: ${OUT}\n`));
});
