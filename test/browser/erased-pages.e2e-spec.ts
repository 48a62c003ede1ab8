/**
 * Erased records in a real browser (issue 29): the receipt and job pages of
 * erased content at 1280x900 and 390x844. The erasure leads the page in
 * words above the fold, nothing green leads, hostile erasure text (markup,
 * RTL override) stays text, and nothing overflows the page.
 */
import { mkdtempSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';
import { DatabaseService } from '../../src/database/database.service';
import { buildTimeline, receiptFor } from '../coverage/fixtures';

const REASON = 'customer request <script>alert(1)</script> \u202Egnp.exe';
const BASIS = 'GDPR Art. 17(1)(a)';

(SKIP_BROWSER ? describe.skip : describe)('erased records in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiptId: string;
  const job = 'job-erased-in-browser';

  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const post = (path: string, body: unknown, key: string) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    const tl = buildTimeline(job, [{ tool: 'fetch_customer' }, { tool: 'send_payment' }, { tool: 'notify_customer' }, { tool: 'archive' }]);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    receiptId = tl[1].id.toLowerCase();
    // Erase the receipt of entry 2, then entry 2 itself (by its position).
    expect((await post('/api/erasures', { receipt_ids: [receiptId], reason: REASON, legal_basis: BASIS }, t.keys.privacy)).status).toBe(201);
    const [{ position }] = await t.app.get(DatabaseService).query<{ position: number | string }>('SELECT position FROM timeline_entries WHERE job_id = ? AND seq = 2', [job]);
    expect((await post('/api/erasures', { positions: [Number(position)], reason: REASON, legal_basis: BASIS }, t.keys.privacy)).status).toBe(201);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('receipt and job pages after erasure: the erasure leads in words above the fold, no green headline, escaped, no overflow', async () => {
    const dir = process.env.ERASED_SHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'aer1-erased-'));
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      const page = await browser.newPage({ viewport: { width, height } });
      for (const [name, path] of [['receipt', `/run/${receiptId}`], ['job', `/jobs/${job}`]]) {
        expect((await page.goto(`${base}${path}`))?.status()).toBe(200);
        const lead = page.locator('#verdict .line').first();
        expect(await lead.getAttribute('class')).not.toContain('ok');
        const box = await lead.boundingBox();
        expect(box!.y + box!.height).toBeLessThanOrEqual(height);
        const statement = page.locator(name === 'receipt' ? '#erasure-statement' : '#erasure-statements li .erasure-statement').first();
        expect(await statement.innerText()).toMatch(/^Content erased on \d{4}-\d{2}-\d{2} by test-privacy \(GDPR Art\. 17\(1\)\(a\)\): customer request <script>alert\(1\)<\/script> <U\+202E>gnp\.exe$/);
        expect(await page.locator('script').count()).toBe(0);
        if (name === 'job') expect(await lead.innerText()).toContain('Chain: PARTLY ERASED \u2014 1 of 4 entries erased; links checked: 1, not re-checkable: 2');
        expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
        await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
      }
      await page.close();
    }
    process.stdout.write(`erased-page screenshots: ${dir}\n`);
  }, 90_000);
});
