import { mkdirSync } from 'node:fs';
import AxeBuilder from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { createSession, SESSION_COOKIE } from '../../src/domain/auth/sessions.ts';
import type { Member } from '../../src/domain/members/members.ts';
import type { TestApp } from './app.ts';
import { appRoutes } from './app-routes.ts';
import { outboxPath } from './browser.ts';

/** Where the Chromium page suite saves its screenshots (git-ignored; docs/development.md). */
export const SCREENSHOTS = 'test-artifacts/screenshots';

export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 900 } } as const;

/** The WCAG 2.1 A and AA rules, as axe tags them. */
export const WCAG_21_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Every GET page of the app, read from its routes (a page added later is covered without a list):
 * parameters get a value no record has (the page's own 404), the dev outbox its key.
 */
export function pagePaths(t: TestApp): string[] {
  const paths = appRoutes(t.app)
    .filter((route) => route.methods.includes('GET'))
    .map((route) => route.path)
    .filter(
      (path) =>
        !path.startsWith('/api/') &&
        !path.startsWith('/assets/') &&
        !path.startsWith('/.well-known/') &&
        !/\.(json|xml|txt|ics)$/.test(path) &&
        !['/healthz', '/readyz', '/openapi.json', '/mcp.json', '/llms.txt'].includes(path) &&
        !path.startsWith('/oauth/authorize') &&
        path !== '*',
    )
    .map((path) =>
      path === '/dev/outbox' ? outboxPath(t.deps) : path.replace(/:[A-Za-z_]+/g, 'no-such-thing'),
    );
  // A path the app does not route: the HTML 404 a browser gets.
  return [...new Set([...paths, '/no-such-page'])].sort();
}

/** A browser context signed in as `member` (its session cookie set), or signed out. */
export async function contextFor(
  t: TestApp,
  newContext: (options: { colorScheme: 'light' | 'dark' }) => Promise<BrowserContext>,
  member: Member | undefined,
  colorScheme: 'light' | 'dark' = 'light',
): Promise<BrowserContext> {
  const context = await newContext({ colorScheme });
  // Only this app answers: a story's image on another host is not fetched (tests make no outbound calls).
  await context.route(
    (url) => !url.href.startsWith(t.baseUrl),
    (route) => route.abort(),
  );
  if (member) {
    const session = await createSession(t.deps.db, t.clock, member.id);
    await context.addCookies([{ name: SESSION_COOKIE, value: session, url: t.baseUrl, httpOnly: true }]);
  }
  return context;
}

/**
 * axe's WCAG 2.1 A/AA violations on the page as it is now, one line each (empty: none). axe runs in
 * the page itself (the builder's legacy mode): the app's pages have no frames, and the default mode
 * opens a blank page for every check to merge frames' results, which took the page suite 133 s
 * instead of 85.
 */
export async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(WCAG_21_AA).setLegacyMode().analyze();
  return result.violations.map(
    (violation) =>
      `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes
        .slice(0, 3)
        .map((node) => node.target.join(' '))
        .join(', ')}`,
  );
}

/** A file name for a page: its path without the query, as words. */
export function shotName(path: string): string {
  const bare = path.split('?')[0].replace(/^\/+|\/+$/g, '');
  return bare.replace(/[^A-Za-z0-9]+/g, '-') || 'home';
}

/** Saves the page full length at phone and desktop width under SCREENSHOTS/<folder>/. */
export async function screenshots(page: Page, folder: string, name: string): Promise<void> {
  mkdirSync(`${SCREENSHOTS}/${folder}`, { recursive: true });
  const original = page.viewportSize();
  for (const [width, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: `${SCREENSHOTS}/${folder}/${name}-${width}.png`, fullPage: true });
  }
  if (original) await page.setViewportSize(original);
}

/** How far the page scrolls sideways at a phone's width (tables scroll inside their own box): 0 is none. */
export async function fitsThePhone(page: Page): Promise<number> {
  await page.setViewportSize(WIDTHS.phone);
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}
