import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where the browser tests leave their screenshots. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

/** A full-page screenshot, test/artifacts/<name>.png. */
export function screenshot(page: Page, name: string): Promise<Buffer> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Debian's chromium, driven by playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * `npm test` installs chromium where it can (test/ensure-test-tools.sh). Elsewhere browser tests are
 * skipped on a developer's machine, but CI always runs them (and fails without chromium).
 */
export const RUN_BROWSER = existsSync(CHROMIUM) || process.env.CI === 'true';

/** A headless chromium for tests: no sandbox (containers), nothing fetched in the background. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
