/**
 * Swagger UI at /docs and Bull Board at /queues render in a real browser
 * under the Content-Security-Policy helmet sends (integrity issue, costs and
 * limits): no CSP violation, the UI comes up. Headless Debian Chromium via
 * playwright-core; without /usr/bin/chromium the test FAILS unless
 * SKIP_BROWSER_TESTS=1 is set.
 */
import { randomBytes } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { Browser, Page } from 'playwright-core';
import { launchChromium, SKIP_BROWSER } from './chromium';
import { startApp, TestApp } from '../helpers/app';


(SKIP_BROWSER ? describe.skip : describe)('/docs and /queues in a real browser under the CSP', () => {
  let t: TestApp;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    t = await startApp('sqlite', { REDIS_URL: 'redis://127.0.0.1:6379', QUEUE_PREFIX: `aer1-docs-${randomBytes(4).toString('hex')}` });
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** CSP violations the page reports (console messages and securitypolicyviolation events). */
  async function watch(page: Page): Promise<string[]> {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('Refused to load (CSP): ' + e.violatedDirective + ' ' + e.blockedURI));" });
    return violations;
  }

  it('Swagger UI renders the API under the CSP', async () => {
    const page = await browser.newPage();
    const violations = await watch(page);
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 20_000 });
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('AER-1 audit ledger');
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);

  it('Bull Board renders for an auditor under the CSP (fonts from elsewhere aside)', async () => {
    const ctx = await browser.newContext({ httpCredentials: { username: 'auditor', password: t.keys.auditor } });
    const page = await ctx.newPage();
    const violations = await watch(page);
    const res = await page.goto(`${base}/queues`);
    expect(res?.status()).toBe(200);
    await page.getByText('verification').first().waitFor({ timeout: 20_000 });
    // Bull Board links Google Fonts; the policy keeps them out (the board falls back to local fonts).
    expect(violations.filter((v) => !/fonts\.googleapis\.com/.test(v))).toEqual([]);
    await ctx.close();
  }, 60_000);
});
