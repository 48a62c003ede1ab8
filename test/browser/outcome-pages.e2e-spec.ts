/**
 * Outcome pages in a real browser (issue 18): the outcome page, the
 * receipt page's outcome list and the coverage report's outcome section,
 * with hostile system and effect names (HTML, right-to-left text) and
 * hostile observation bytes (bidi and invisible characters), at desktop and
 * phone widths. Invisible and bidi characters in system and effect names are
 * refused at the door (422); HTML is shown as text; nothing overflows the
 * page sideways; a superseded confirmation is never shown green.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';
import { buildTimeline, commitmentFor, receiptFor } from '../coverage/fixtures';
import { outcomeFor, PAYMENT_STEPS, paymentPlan } from '../outcomes/fixtures';

const SYSTEM = 'PAY<img src=x onerror=alert(1)>"ments';
const RTL = '\u05EA\u05E9\u05DC\u05D5\u05DE\u05D9\u05DD';
const EFFECT = 'payment.<b>settled</b>';

(SKIP_BROWSER ? describe.skip : describe)('outcome pages in a real browser', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const ids = { receipt: '', settled: '', reversed: '', report: '' };

  beforeAll(async () => {
    t = await startApp('sqlite');
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const key = (await t.app.get(ApiKeysService).create('pay <i>sys</i>', 'outcome', { systems: [SYSTEM, RTL] })).key;
    const post = (path: string, body: unknown, k: string) => t.http.post(path).set('Authorization', `Bearer ${k}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
    const job = 'job-hostile-outcomes';
    expect((await post('/api/plans', paymentPlan(job, { effect: EFFECT, from_system: SYSTEM }), t.keys.compliance)).status).toBe(201);
    const tl = buildTimeline(job, PAYMENT_STEPS);
    for (const e of tl) expect((await post('/api/receipts', receiptFor(e), t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/entries`, tl, t.keys.producer)).status).toBe(201);
    expect((await post(`/api/jobs/${job}/commitments`, commitmentFor(tl), t.keys.producer)).status).toBe(201);
    ids.receipt = tl[1].id.toLowerCase();
    const settled = outcomeFor({ name: 'hostile-settled', job_id: job, receipt_id: tl[1].id, system: SYSTEM, effect: EFFECT, observation: 'settled \u202Eliaf\u202C <script>alert(1)</script> \u200Bzw' });
    const rtl = outcomeFor({ name: 'hostile-rtl', job_id: job, receipt_id: tl[1].id, system: RTL, effect: EFFECT, observed_at: '2026-10-01T12:02:00Z' });
    const reversed = outcomeFor({ name: 'hostile-reversed', job_id: job, receipt_id: tl[1].id, system: SYSTEM, effect: EFFECT, result: 'reversed', observed_at: '2026-10-02T09:00:00Z' });
    for (const o of [settled, rtl, reversed]) expect((await post('/api/outcomes', o, key)).status).toBe(201);
    // Bidi and invisible characters in a system or effect name are refused, nothing recorded.
    const bidi = await post('/api/outcomes', outcomeFor({ name: 'bidi', job_id: job, receipt_id: tl[1].id, system: 'PAY\u202EX' }), key);
    expect([bidi.status, bidi.body.reasons]).toEqual([422, ['invalid_field:system']]);
    ids.settled = settled.outcome_id.toLowerCase();
    ids.reversed = reversed.outcome_id.toLowerCase();
    const r = await post('/api/coverage-reports', { job_id: job }, t.keys.auditor);
    expect(r.status).toBe(201);
    ids.report = r.body.report_id;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows hostile names as text at desktop and phone widths; a superseded confirmation is not green', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aer1-outcomes-'));
    for (const width of [1280, 390]) {
      for (const [name, path] of [['outcome', `/outcome/${ids.settled}`], ['receipt', `/run/${ids.receipt}`], ['coverage', `/coverage/${ids.report}`]]) {
        const page = await browser.newPage({ viewport: { width, height: 900 } });
        let dialogs = 0;
        page.on('dialog', (d) => {
          dialogs++;
          void d.dismiss();
        });
        expect((await page.goto(`${base}${path}`))?.status()).toBe(200);
        expect(await page.locator('main img, main script').count()).toBe(0);
        // The page never scrolls sideways (wide tables scroll in their own box).
        expect(await page.evaluate(() => { const w = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number }); return w.document.documentElement.scrollWidth - w.innerWidth; })).toBeLessThanOrEqual(0);
        expect(await page.locator('main').innerText()).toContain(SYSTEM);
        expect(await page.locator('main').innerText()).toContain(EFFECT);
        expect(dialogs).toBe(0);
        const shot = join(dir, `${name}-${width}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        expect(statSync(shot).size).toBeGreaterThan(10_000);
        if (name === 'outcome') {
          // This confirmation was reversed later: a warning, never the green "ok" line.
          // Issue 27: it leads the headline (its largest line), the commitment's validity second.
          expect(await page.locator('#outcome-result').getAttribute('class')).toBe('line warn');
          expect(await page.locator('#verdict-line').getAttribute('class')).toBe('line ok sub');
          expect(await page.locator('#verdict .line').first().getAttribute('id')).toBe('outcome-result');
          expect(await page.locator('#superseded-line').innerText()).toContain(ids.reversed);
          expect(await page.locator('pre').first().innerText()).toContain('<U+202E>');
        }
        if (name === 'receipt') {
          const items = page.locator('#outcomes-list li');
          expect(await items.count()).toBe(3);
          // Newest first: the reversal, the RTL system's confirmation, the superseded confirmation.
          expect(await items.nth(0).locator('.badge').innerText()).toContain('reversed');
          expect(await items.nth(1).innerText()).toContain(RTL);
          expect(await items.nth(2).locator('.badge').getAttribute('class')).toBe('badge warn');
          expect(await items.nth(2).innerText()).toContain('Reported by key pay <i>sys</i>');
        }
        if (name === 'coverage') expect(await page.locator('#outcome-actions td.o-contradicted').count()).toBe(1);
        await page.close();
      }
    }
    process.stdout.write(`outcome page screenshots: ${dir}\n`);
  }, 60_000);
});
