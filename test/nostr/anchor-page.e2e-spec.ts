/**
 * The "Anchored on Nostr (S10)" section of a receipt page in Debian's
 * headless Chromium, at desktop and phone widths (issue 33): visible, says
 * which relay accepted the event and which refused it, and nothing in the
 * page is wider than the screen (event ids and envelopes scroll inside
 * their boxes). Screenshots are written to a temporary folder, named on stdout.
 */
import { mkdtempSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { CheckpointSigner } from '../../src/log/checkpoint-signer';
import { createNostrKeyFile } from '../../src/log/nostr-config';
import { NostrPublisher } from '../../src/log/nostr-publisher';
import { startApp, TestApp } from '../helpers/app';
import { freshReceipt } from '../reliability/helpers';
import { launchChromium, SKIP_BROWSER } from '../browser/chromium';
import { startRelay, TestRelay } from './relay';

(SKIP_BROWSER ? describe.skip : describe)('the Nostr anchor section of a receipt page in a real browser', () => {
  jest.setTimeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'aer1-nostr-page-'));
  let t: TestApp;
  let browser: Browser;
  let good: TestRelay;
  let refusing: TestRelay;
  let base = '';
  let id = '';

  beforeAll(async () => {
    good = await startRelay();
    refusing = await startRelay();
    refusing.refuse = true;
    const key = join(dir, 'nostr.key');
    createNostrKeyFile(key);
    t = await startApp('sqlite', { NOSTR_RELAYS: `${good.url},${refusing.url}`, NOSTR_KEY_FILE: key, NOSTR_ALLOW_INSECURE: 'true', NOSTR_INTERVAL_MS: '0' });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const r = freshReceipt();
    id = r.id;
    expect((await t.http.post('/api/receipts').set('Authorization', `Bearer ${t.keys.producer}`).set('Content-Type', 'application/json').send(r.text)).status).toBe(201);
    await t.app.get(CheckpointSigner).tick();
    await t.app.get(NostrPublisher).tick();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await good?.close();
    await refusing?.close();
  });

  it.each([
    [1280, 900],
    [390, 844],
  ])('at %i px wide', async (w, h) => {
    const page = await browser.newPage({ viewport: { width: w, height: h } });
    expect((await page.goto(`${base}/run/${id}`))?.status()).toBe(200);
    const section = page.locator('#anchors');
    expect(await section.isVisible()).toBe(true);
    const text = await section.innerText();
    expect(text).toContain('Anchored on Nostr (S10)');
    expect(text).toContain(`${good.url}: accepted (OK true)`);
    expect(text).toContain(`${refusing.url}: not accepted (blocked: this relay does not accept events from this key)`);
    expect(text).toMatch(/Published\s+yes, first accepted at \d{4}-/);
    await section.screenshot({ path: join(dir, `anchors-${w}.png`) });
    process.stdout.write(`anchor section screenshot: ${join(dir, `anchors-${w}.png`)}\n`);
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1')).toBe(true);
    await page.close();
  });
});
