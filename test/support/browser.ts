import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser), for the dashboard tests. */
export const CHROMIUM = '/usr/bin/chromium';

// Without Debian's chromium (`apt-get install chromium`) a developer's `npm test` skips these, and
// says so; CI never does: .ci/run installs the browser, and a missing one there is a failure.
export const noBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (noBrowser) console.warn(`dashboard tests skipped: no browser at ${CHROMIUM} (apt-get install chromium)`);

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function expectText(locator: ReturnType<Page['getByTestId']>, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout: 8000 });
}
