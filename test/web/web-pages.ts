import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { ROOT } from '../helpers/server-process.js';

/*
 * What every web-app browser test needs: a context that can reach only the server under
 * test, axe-core's verdict on a page, and the 375 px check.
 */

const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** A browser context whose every request to another host is refused (nothing on the network). */
export async function isolatedContext(browser: Browser, base: string, viewport = { width: 1280, height: 900 }, timezoneId?: string): Promise<{ context: BrowserContext; refused: string[] }> {
  const context = await browser.newContext({ viewport, ...(timezoneId === undefined ? {} : { timezoneId }) });
  const host = new URL(base).host;
  const refused: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.host === host || url.protocol === 'data:') return route.continue();
    refused.push(url.href);
    return route.abort('blockedbyclient');
  });
  return { context, refused };
}

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2 A/AA and best practices). */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Expressions as text: this file is compiled without the DOM library.
  // Evaluated through the debugging protocol: the page's CSP (rightly) refuses an injected <script>.
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(AXE);
  const result = await page.evaluate<AxeResult>("axe.run(document, { resultTypes: ['violations'] })");
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`);
}

/**
 * No serious or critical axe violation, and on a 375 px phone nothing wider than it, no
 * drawing's text shrunk below a readable size (a scaled chart's labels were 6 px) and no
 * one-word button broken over lines.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([]);
  const width = await page.evaluate<number>('window.innerWidth');
  if (width <= 375) {
    const scroll = await page.evaluate<number>('document.documentElement.scrollWidth');
    expect(scroll, `${name} fits 375 px without sideways scrolling`).toBeLessThanOrEqual(width);
    const smallest = await page.evaluate<number>("Math.min(Infinity, ...[...document.querySelectorAll('svg text')].map((t) => t.getBoundingClientRect().height))");
    expect(smallest, `${name}: text in drawings at least 11 px tall`).toBeGreaterThanOrEqual(11);
    // A one-word button or link on one line: a word broken over lines reads as nonsense.
    const broken = await page.evaluate<string[]>(
      "[...document.querySelectorAll('button, a')].filter((e) => e.childElementCount === 0 && /^\\S+$/.test(e.textContent.trim()) && e.getClientRects().length > 0).filter((e) => { const r = document.createRange(); r.selectNodeContents(e); return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1; }).map((e) => e.textContent.trim())",
    );
    expect(broken, `${name}: one-word buttons and links kept whole`).toEqual([]);
  }
}

export const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

/** Creates a session through the API as the token's user; answers its id. */
export async function createSessionAs(base: string, token: string, body: Record<string, unknown>): Promise<number> {
  const created = await fetch(`${base}/api/v1/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { data: { id: number } }).data.id;
}

/** Signs in through the page, as a person would. */
export async function signIn(page: Page, base: string, handle: string, password: string): Promise<void> {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Handle', { exact: true }).fill(handle);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(/\/week/);
}
