/**
 * The "In the verifiable log" section of a record's page (issue 14) in a
 * real browser, at desktop and phone widths: pending (grey) before a
 * checkpoint, proven (green) after, failed (red) when the stored tree no
 * longer proves the record; never wider than the screen. Screenshots are
 * written to a temporary folder (printed) for a person to look at.
 */
import { mkdtempSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { DatabaseService } from '../../src/database/database.service';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { startApp, TestApp } from '../helpers/app';
import { freshReceipt } from '../reliability/helpers';
import { launchChromium, SKIP_BROWSER } from './chromium';

(SKIP_BROWSER ? describe.skip : describe)('the log section of a record page in a real browser', () => {
  jest.setTimeout(90_000);
  let t: TestApp;
  let browser: Browser;
  let base: string;
  const ids: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'aer1-log-section-'));

  beforeAll(async () => {
    t = await startApp('sqlite', { DATABASE_URL: `sqlite:${join(dir, 'ledger.sqlite')}` });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    for (let i = 0; i < 9; i++) {
      const r = freshReceipt();
      expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text)).status).toBe(201);
      ids.push(r.id);
    }
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function look(id: string, name: string): Promise<{ line: string; tone: string }[]> {
    const out: { line: string; tone: string }[] = [];
    for (const [w, h] of [
      [1280, 900],
      [390, 844],
    ]) {
      const page = await browser.newPage({ viewport: { width: w, height: h } });
      expect((await page.goto(`${base}/run/${id}`))?.status()).toBe(200);
      const section = page.locator('#log');
      expect(await section.isVisible()).toBe(true);
      const line = page.locator('#log .verdict .line').first();
      out.push({ line: await line.innerText(), tone: (await line.getAttribute('class')) ?? '' });
      // Nothing in the page is wider than the screen (long hashes scroll inside their boxes).
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
      await section.screenshot({ path: join(dir, `${name}-${w}.png`) });
      await page.close();
    }
    process.stdout.write(`log section screenshots: ${join(dir, name)}-{1280,390}.png\n`);
    return out;
  }

  it('pending before a checkpoint, proven after (with the proof to open), failed when the stored tree is altered', async () => {
    const pending = await look(ids[8], 'pending');
    for (const p of pending) expect(p).toEqual({ line: expect.stringContaining('not yet in a signed checkpoint'), tone: expect.stringContaining('na') });
    await t.app.get(CheckpointSigner).tick();
    const proven = await look(ids[8], 'proven');
    for (const p of proven) expect(p).toEqual({ line: expect.stringContaining('proven in signed checkpoint 9 (inclusion proof checked)'), tone: expect.stringContaining('ok') });
    // Node (3, 0) is on leaf 8's path: changed behind the triggers, the page says NOT proven, in red.
    const db = t.app.get(DatabaseService);
    await db.unsafeQuery('DROP TRIGGER tree_nodes_no_update');
    await db.unsafeQuery('UPDATE tree_nodes SET hash = zeroblob(32) WHERE level = 3 AND idx = 0');
    const failed = await look(ids[8], 'failed');
    for (const p of failed) expect(p).toEqual({ line: expect.stringContaining('is NOT proven by the newest checkpoint'), tone: expect.stringContaining('bad') });
  });
});
