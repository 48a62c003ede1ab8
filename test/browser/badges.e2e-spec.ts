/**
 * Badges and the coverage page served by the real app, in headless
 * Chromium: each badge loads as an image (embedded as other sites embed
 * it), and the coverage page's inline SVG draws under the page's
 * Content-Security-Policy. `WRITE_DOCS_IMG=1` writes docs/img/badges.png.
 */
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { FIVE_PLAN, FIVE_STEPS } from '../coverage/picture-fixtures';

const corpus = JSON.parse(readFileSync(join(__dirname, '../vectors/aer1-public/aer1-vectors.json'), 'utf8')) as { vectors: { id: string; input: unknown }[] };
const valid3 = corpus.vectors.find((v) => v.id === 'workflow-valid-3')!.input as { workflow: { workflow_id: string }; step_receipts: { id: string }[] };
const OUT = process.env.WRITE_DOCS_IMG === '1' ? join(__dirname, '../../docs/img') : mkdtempSync(join(tmpdir(), 'aer1-badges-'));

(SKIP_BROWSER ? describe.skip : describe)('badges and the coverage page in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  let reportId: string;
  const job = 'job-badges';
  const timeline = buildTimeline(job, FIVE_STEPS);

  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const post = (path: string, body: unknown, key = t.keys.producer) => t.http.post(path).set('Authorization', `Bearer ${key}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    expect((await post('/api/plans', { ...FIVE_PLAN, job_id: job }, t.keys.compliance)).status).toBe(201);
    for (let i = 0; i < timeline.length; i++) expect((await post('/api/receipts', receiptFor(timeline[i], FIVE_STEPS[i].status ?? 'ok'))).status).toBe(201);
    expect((await t.http.put(`/api/jobs/${job}/timeline`).set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(JSON.stringify(timeline))).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(timeline))).status).toBe(201);
    const issued = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(issued.status).toBe(201);
    reportId = issued.body.report_id;
    for (const r of valid3.step_receipts) expect((await post('/api/receipts', r)).status).toBe(201);
    expect((await post('/api/workflows', valid3.workflow)).status).toBe(201);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('each badge loads as an image in another page', async () => {
    const page = await browser.newPage({ viewport: { width: 700, height: 260 } });
    const badges = [
      ['receipt, valid', `/badge/receipt/${timeline[1].id}.svg`],
      ['receipt of a failed call', `/badge/receipt/${timeline[3].id}.svg`],
      ['job, binding commitment', `/badge/job/${job}.svg`],
      ['workflow with a finding', `/badge/workflow/${valid3.workflow.workflow_id}.svg`],
    ];
    const html = `<!doctype html><body style="font:14px sans-serif;margin:16px">${badges.map(([label, path]) => `<p>${label}: <img alt="${label}" src="${base}${path}"></p>`).join('')}</body>`;
    await page.goto(`${base}/`); // same origin as the images
    await page.setContent(html, { waitUntil: 'load' });
    const widths = await page.locator('img').evaluateAll((imgs) => imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth));
    expect(widths.every((w) => w > 100)).toBe(true);
    const shot = join(OUT, 'badges.png');
    await page.screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(3_000);
    process.stdout.write(`badges screenshot: ${shot}\n`);
    await page.close();
  }, 60_000);

  for (const vp of [
    { name: 'desktop', width: 1280, height: 900 },
    { name: 'phone', width: 390, height: 844 },
  ]) {
    it(`the served coverage page draws its picture under its CSP at ${vp.name} width`, async () => {
      const page = await browser.newPage({ viewport: { width: vp.width, height: vp.height } });
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused/i.test(m.text())) violations.push(m.text());
      });
      const res = await page.goto(`${base}/coverage/${reportId}`);
      expect(res?.status()).toBe(200);
      const svg = page.locator('.picture svg');
      expect(await svg.isVisible()).toBe(true);
      expect(await page.locator('.picture svg g.row').count()).toBe(6);
      expect(await page.locator('.picture svg g.after[data-ok="false"]').count()).toBe(2);
      expect(violations).toEqual([]);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow).toBeLessThanOrEqual(1);
      const pdfLink = page.locator(`a[href="/coverage/${reportId}.pdf"]`);
      expect(await pdfLink.count()).toBe(1);
      const pdf = await page.request.get(`${base}/coverage/${reportId}.pdf`);
      expect(pdf.status()).toBe(200);
      expect((await pdf.body()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
      await page.close();
    }, 60_000);
  }
});
