/**
 * Erased records in a real browser (issue 29): the receipt and job pages of
 * erased content, the coverage report pages of erased evidence and of an
 * erased report, and the job page of erased commitments, at 1280x900 and
 * 390x844. The erasure leads the page in words above the fold, nothing green
 * leads, erased evidence is never drawn as plain green "covered", hostile
 * erasure text (markup, RTL override) stays text, and nothing overflows.
 */
import { mkdtempSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';
import { DatabaseService } from '../../src/database/database.service';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { pdfTextOf } from '../helpers/pdf-text';
import { PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

const REASON = 'customer request <script>alert(1)</script> \u202Egnp.exe';
const BASIS = 'GDPR Art. 17(1)(a)';

(SKIP_BROWSER ? describe.skip : describe)('erased records in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let receiptId: string;
  const job = 'job-erased-in-browser';
  const job2 = 'job-erased-report';
  /** Report ids: issued before the job's erasure, after it (counting erased evidence), and one erased by position. */
  const reports = { before: '', after: '', erased: '' };

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
    // A job with a plan and an endpoint commitment: a report before its erasure, one after, and one erased by position.
    expect((await post('/api/plans', paymentPlan(job2), t.keys.compliance)).status).toBe(201);
    const tl2 = buildTimeline(job2, PAYMENT_STEPS);
    for (const e of tl2) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job2}/entries`, tl2, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job2}/commitments`, commitmentFor(tl2), t.keys.producer)).status).toBe(201);
    const issue = async (): Promise<string> => {
      const r = await post('/api/coverage-reports', { job_id: job2 }, t.keys.auditor);
      expect(r.status).toBe(201);
      return r.body.report_id as string;
    };
    reports.before = await issue();
    reports.erased = await issue();
    expect((await post('/api/erasures', { job_ids: [job2], reason: REASON, legal_basis: BASIS }, t.keys.privacy)).status).toBe(201);
    reports.after = await issue();
    const [{ position: rp }] = await t.app.get(DatabaseService).query<{ position: number | string }>('SELECT position FROM coverage_reports WHERE report_id = ?', [reports.erased]);
    expect((await post('/api/erasures', { positions: [Number(rp)], reason: REASON, legal_basis: BASIS }, t.keys.privacy)).status).toBe(201);
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

  it('coverage pages and the job page after erasure: erased evidence is "covered \u2014 evidence erased", never green; an erased report and erased commitments say so; the PDF too', async () => {
    const dir = process.env.ERASED_SHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'aer1-erased-'));
    const noGreenLead = async (page: import('playwright-core').Page, height: number): Promise<void> => {
      const lead = page.locator('#verdict .line').first();
      expect(await lead.getAttribute('class')).not.toContain('ok');
      const box = await lead.boundingBox();
      expect(box!.y + box!.height).toBeLessThanOrEqual(height);
    };
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      const page = await browser.newPage({ viewport: { width, height } });
      // A report issued after the erasure: `lookup` covered by erased evidence, amber with its own words and mark (`pay` leads
      // with its unconfirmed required outcome, red).
      expect((await page.goto(`${base}/coverage/${reports.after}`))?.status()).toBe(200);
      await noGreenLead(page, height);
      const cells = page.locator('td.s-erased');
      expect(await cells.count()).toBe(1);
      expect(await page.locator('td.s-outcome').count()).toBe(1);
      expect(await cells.first().innerText()).toContain('covered \u2014 evidence erased');
      expect(await page.locator('td.s-covered').count()).toBe(0);
      expect(await cells.first().evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color)).toBe('rgb(154, 103, 0)');
      // The picture: its rows say the words, its marks are the erased kind (dashed squares), never the green "succeeded" circles.
      const svg = await page.locator('.picture svg').innerHTML();
      expect(svg).toContain('covered \u2014 evidence erased');
      expect(svg).toContain('stroke-dasharray="2 1.4"');
      expect(svg).toMatch(/<title>seq 1: accepted, erased since \(verified at ingestion\)<\/title>/);
      expect(svg).not.toMatch(/<title>seq [^<]*: accepted evidence, succeeded<\/title>/);
      // Issued after the erasure, it read the evidence as erased: nothing was erased since, and its commitment was recorded.
      const lines = await page.locator('#verdict .line').allInnerTexts();
      expect(lines.some((l) => l.includes('erased after it was issued'))).toBe(false);
      expect(lines.find((l) => l.includes('Endpoint commitment'))).toMatch(/truncation not excluded \(\d+ recorded and erased since, not judged\)$/);
      await page.screenshot({ path: join(dir, `report-after-${width}.png`), fullPage: true });
      // The report issued before: it leads with the erasure since.
      expect((await page.goto(`${base}/coverage/${reports.before}`))?.status()).toBe(200);
      await noGreenLead(page, height);
      expect(await page.locator('#verdict .line').first().innerText()).toMatch(/^\u26a0 Evidence this report counted was erased after it was issued \(\d+ events, last on \d{4}-\d{2}-\d{2}\)/);
      // The report erased by position: the erasure leads, the recorded result is grey, no digest, no picture.
      expect((await page.goto(`${base}/coverage/${reports.erased}`))?.status()).toBe(200);
      await noGreenLead(page, height);
      expect(await page.locator('#erasure-statement').first().innerText()).toMatch(/^Content erased on \d{4}-\d{2}-\d{2} by test-privacy/);
      expect(await page.locator('#recorded-result').innerText()).toMatch(/^[a-z_]+$/);
      expect(await page.locator('.picture').count()).toBe(0);
      await page.screenshot({ path: join(dir, `report-erased-${width}.png`), fullPage: true });
      // The job page: its commitment was recorded, then erased; not "absent".
      expect((await page.goto(`${base}/jobs/${job2}`))?.status()).toBe(200);
      await noGreenLead(page, height);
      const verdict = await page.locator('#verdict').first().innerText();
      expect(verdict).toMatch(/endpoint commitments: \d+ recorded and erased since \(not judged\)/);
      expect(verdict).not.toContain('endpoint commitments: absent');
      await page.screenshot({ path: join(dir, `job-commitments-${width}.png`), fullPage: true });
      for (const path of [`/coverage/${reports.after}`, `/coverage/${reports.erased}`, `/jobs/${job2}`]) {
        await page.goto(`${base}${path}`);
        expect([path, await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth) <= width]).toEqual([path, true]);
      }
      await page.close();
    }
    // The PDFs: the report issued before says the evidence was erased since; the one after names the erased evidence.
    const pdf = async (id: string): Promise<string> => (await pdfTextOf((await t.http.get(`/coverage/${id}.pdf`).buffer(true)).body as Buffer)).text;
    expect(await pdf(reports.before)).toMatch(/Evidence this report counted was erased after it was issued \(\d+ events, last on \d{4}-\d{2}-\d{2}\)/);
    const after = await pdf(reports.after);
    expect(after).toContain('COVERED \u2014 EVIDENCE ERASED');
    expect(after).not.toContain('erased after it was issued');
    expect((await t.http.get(`/coverage/${reports.erased}.pdf`)).status).toBe(410);
    process.stdout.write(`erased coverage screenshots: ${dir}\n`);
  }, 120_000);
});
