import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium: the page suites skip without it, unless CI says it must be there. */
export const CHROMIUM = '/usr/bin/chromium';
export const chromiumPresent = existsSync(CHROMIUM);
if (!chromiumPresent && process.env.REQUIRE_CHROMIUM === '1' && process.env.SKIP_CHROMIUM_SUITES !== '1')
  throw new Error(`REQUIRE_CHROMIUM=1 but ${CHROMIUM} is missing`);
/**
 * `.ci/run` drives Chromium on its first Node line only (SKIP_CHROMIUM_SUITES=1 on the others): what
 * those suites judge, the pages' markup and the browser's side of a flow, does not change with the
 * Node line serving them, and they are a third of the suite's CPU (docs/development.md, "Node lines").
 */
export const skipWithoutChromium =
  process.env.SKIP_CHROMIUM_SUITES === '1'
    ? 'SKIP_CHROMIUM_SUITES=1: the Chromium suites run on the first Node line of .ci/run'
    : chromiumPresent
      ? false
      : `no ${CHROMIUM}`;

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
