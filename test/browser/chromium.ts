/** Debian's headless Chromium for the browser tests (playwright-core drives it; no downloaded browser). */
import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** `SKIP_BROWSER_TESTS=1` skips the browser suites explicitly; otherwise a missing Chromium FAILS them. */
export const SKIP_BROWSER = process.env.SKIP_BROWSER_TESTS === '1';

/** Launch Chromium headless with the flags this closed network needs; throws a readable error when it is missing. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: \`npm test\` installs it first when run as root (scripts/test-prereqs.sh); otherwise apt-get install -y chromium, or set SKIP_BROWSER_TESTS=1 to skip the browser tests explicitly`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
