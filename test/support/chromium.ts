import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium: the page suites skip without it, unless CI says it must be there. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent && process.env.REQUIRE_CHROMIUM === '1')
  throw new Error(`REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing`);
export const skipWithoutChromium = chromiumPresent ? false : `no ${CHROMIUM}`;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
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
