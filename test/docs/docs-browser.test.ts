import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_SKIP_NOTICE, chromiumAvailable } from '../helpers/browser.js';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * /docs as an integrator meets it: a real browser on a real server process. The page
 * renders the document, Authorize takes a token, "Try it out" on GET /me answers 200, and
 * the pre-filled example bodies are valid and create what they show.
 */

const available = chromiumAvailable();

// The global set-up says so too; the suite's own name carries the reason into the report.
describe.skipIf(!available)(available ? '/docs in chromium' : `/docs in chromium: ${CHROMIUM_SKIP_NOTICE}`, () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let browser: Browser;
  let token: string;

  beforeAll(async () => {
    await buildOnce();
    database = await createTestDatabase('sqlite');
    const storage = openStorage({ databaseUrl: database.url });
    try {
      await storage.migrate();
      const admin = createAuthService(storage);
      await admin.addUser('alice', [1]);
      token = (await admin.issueToken('alice', { name: 'browser' })).token;
    } finally {
      await storage.close();
    }
    server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
  });

  it('renders the document, authorizes with a token, runs GET /me, and runs the pre-filled examples', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(new URL(r.url()).pathname));
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // The content security policy blocks nothing the page needs.
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });

    await page.goto(`${server.url}/docs`);
    await expect.poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 20_000 }).toContain('Focus API');
    // The documented address, not the plugin's own copy.
    expect(requested).toContain('/api/v1/openapi.json');
    expect(requested).not.toContain('/docs/json');

    await page.locator('.scheme-container button.authorize').click();
    const dialog = page.locator('.modal-ux');
    await dialog.locator('#auth-bearer-value').fill(token);
    await dialog.getByRole('button', { name: 'Apply credentials' }).click();
    await expect.poll(() => dialog.getByRole('button', { name: 'Remove authorization' }).count()).toBe(1);
    await dialog.locator('button.btn-done').click();

    const me = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/api/v1/me"]') });
    await me.locator('.opblock-summary').first().click();
    await me.locator('button.try-out__btn').click();
    await me.locator('button.execute').click();
    const answer = me.locator('.live-responses-table tr.response');
    await expect.poll(() => answer.locator('.response-col_status').textContent(), { timeout: 20_000 }).toBe('200');
    const body = await answer.locator('pre code').first().textContent();
    expect(JSON.parse(body ?? 'null')).toEqual({ data: { handle: 'alice', org_ids: [1], timezone: 'UTC', reminders: [5] } });

    // "Try it out" starts from the documented examples: valid bodies without read-only
    // fields, which create what they say (session 1 is the first one created).
    const tryOut = async (method: string, path: string) => {
      const op = page.locator(`.opblock-${method}`, { has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
      await op.locator('.opblock-summary').first().click();
      await op.locator('button.try-out__btn').click();
      const editor = op.locator('textarea.body-param__text');
      const prefilled = (await editor.count()) > 0 ? (JSON.parse(await editor.inputValue()) as Record<string, unknown>) : undefined;
      await op.locator('button.execute').click();
      const row = op.locator('.live-responses-table tr.response');
      await expect.poll(() => row.locator('.response-col_status').textContent(), { timeout: 20_000 }).toMatch(/^\d{3}$/);
      return { prefilled, status: await row.locator('.response-col_status').textContent(), answer: JSON.parse((await row.locator('pre code').first().textContent()) ?? 'null') as { data: Record<string, unknown> } };
    };
    const session = await tryOut('post', '/api/v1/sessions');
    expect(session.prefilled).toMatchObject({ org_id: 1, name: expect.any(String), time: '9:00 AM' });
    expect(session.status).toBe('201');
    expect(session.answer.data).toMatchObject({ id: 1, ...session.prefilled, created_by: 'alice' });
    const task = await tryOut('post', '/api/v1/tasks');
    expect(Object.keys(task.prefilled ?? {}).sort()).toEqual(['context', 'session_id']);
    expect(task.status).toBe('201');
    expect(task.answer.data).toMatchObject({ ...task.prefilled, owner: 'alice', source: null });
    const listed = await tryOut('get', '/api/v1/sessions');
    expect(listed.status).toBe('200');
    expect(pageErrors).toEqual([]);
    expect(violations).toEqual([]);
  }, 90_000);

  it('is titled with the project’s own name and mark, loads only from this server and is framed nowhere', async () => {
    const response = await fetch(`${server.url}/docs/`);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    const page = await browser.newPage();
    await page.goto(`${server.url}/docs`);
    await expect.poll(() => page.locator('.swagger-ui .info .title').textContent(), { timeout: 20_000 }).toContain('Focus API');
    expect(await page.title()).toBe('Focus API');
    const logo = await page.locator('.topbar img').first().getAttribute('src');
    expect(logo).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from((logo ?? '').split(',')[1] ?? '', 'base64').toString()).toContain('<title>Focus</title>');
    const icons = await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((l) => l.getAttribute('href')));
    expect(icons.length).toBeGreaterThan(0);
    for (const icon of icons) expect(icon).toMatch(/focus\.svg$/);
    expect(await page.content()).not.toMatch(/swagger-ui logo|favicon-(16|32)x/i);
  }, 60_000);
});
