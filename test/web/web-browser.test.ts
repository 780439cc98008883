import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_SKIP_NOTICE, chromiumAvailable } from '../helpers/browser.js';
import { focusJson } from '../helpers/server-process.js';
import { useWebScene } from './web-seed.js';
import { button, checkPage, createSessionAs, isolatedContext, signIn } from './web-pages.js';

/*
 * The web app as a person meets it (contract section 12): a real chromium on a real server
 * process, nothing else reachable. Sign in, the week, a session created, opened and
 * completed by its host, another member's joined and left, its tasks, Now, statistics and
 * settings; the pinned accessible names; axe-core on every page; and the same pages at 375 px.
 * The session form's zones, defaults and focus fields: web-session-form.test.ts.
 */

const available = chromiumAvailable();
const PASSWORD = 'correct horse battery';

/** A start a few minutes ago (UTC, alice's home zone), so that the session can be completed now. */
function startedMinutesAgo(minutes: number): { date: string; time: string } {
  const at = new Date(Date.now() - minutes * 60_000);
  return { date: at.toISOString().slice(0, 10), time: at.toISOString().slice(11, 16) };
}

describe.skipIf(!available)(available ? 'web app in chromium' : `web app in chromium: ${CHROMIUM_SKIP_NOTICE}`, () => {
  const web = useWebScene(PASSWORD);

  const createSession = (token: string, body: Record<string, unknown>) => createSessionAs(web.server.url, token, body);
  const expectButtons = async (page: Page, counts: Record<string, number>) => {
    for (const [name, count] of Object.entries(counts)) expect(await button(page, name).count(), name).toBe(count);
  };

  it('signs in, shows the week, creates a session, opens it and completes it as its host', async () => {
    const { context, refused } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) errors.push(m.text());
    });

    await page.goto(`${web.server.url}/week`);
    await page.waitForURL(/\/sign-in\?next=/);
    await expect.poll(() => button(page, 'Sign in').count()).toBe(1);
    await checkPage(page, 'sign-in');
    await page.getByLabel('Handle', { exact: true }).fill('alice');
    await page.getByLabel('Password', { exact: true }).fill('wrong password!');
    await button(page, 'Sign in').click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Sign-in failed/);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await button(page, 'Sign in').click();
    await page.waitForURL(/\/week$/);

    for (const name of ['Previous week', 'Next week', 'New session']) await expect.poll(() => button(page, name).count(), { message: name }).toBe(1);
    const heading = page.getByRole('heading', { level: 1 });
    const thisWeek = await heading.textContent();
    await button(page, 'Next week').click();
    await expect.poll(() => heading.textContent()).not.toBe(thisWeek);
    await button(page, 'Previous week').click();
    await expect.poll(() => heading.textContent()).toBe(thisWeek);
    await checkPage(page, 'week');

    const { date, time } = startedMinutesAgo(5);
    await button(page, 'New session').click();
    await page.waitForURL(/\/sessions\/new/);
    await page.getByLabel('Name', { exact: true }).fill('Deep work');
    await page.getByLabel('Date', { exact: true }).fill(date);
    await page.getByLabel('Time', { exact: true }).fill(time);
    await checkPage(page, 'new session');
    await button(page, 'Save').click();
    await page.waitForURL(/\/sessions\/\d+$/);
    await expect.poll(() => heading.textContent()).toBe('Deep work');

    // Only what the API would do is offered: the host always takes part, so neither Join nor Leave.
    await expect.poll(() => page.getByText('You host this session, so you always take part.').count()).toBe(1);
    await expectButtons(page, { Join: 0, Leave: 0, Complete: 1 });
    await button(page, 'Complete').click();
    await expect.poll(() => page.getByText('You completed this session.').count()).toBe(1);
    await expectButtons(page, { Save: 1, Delete: 1, Join: 0, Leave: 0, Complete: 0 });
    await checkPage(page, 'session');

    // Tasks: add, tick off, remove.
    await page.getByLabel('New task').fill('Outline the talk');
    await button(page, 'Add task').click();
    const task = page.getByRole('checkbox', { name: 'Outline the talk' });
    await expect.poll(() => task.count()).toBe(1);
    await task.click();
    await expect.poll(() => task.isChecked()).toBe(true);
    await button(page, 'Remove task Outline the talk').click();
    await expect.poll(() => task.count()).toBe(0);

    // The calendar shows the session's name as a link that opens it.
    await page.getByRole('link', { name: 'Week', exact: true }).click();
    await page.waitForURL(/\/week$/);
    const link = page.getByRole('link', { name: 'Deep work', exact: true });
    await expect.poll(() => link.count()).toBe(1);
    await link.click();
    await page.waitForURL(/\/sessions\/\d+$/);
    await expect.poll(() => heading.textContent()).toBe('Deep work');

    expect(errors).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  }, 120_000);

  it("offers Join on another member's public session, then Complete and Leave, and Join again; a mistyped address is a page", async () => {
    const { token } = (await focusJson({ DATABASE_URL: web.databaseUrl }, 'tokens', 'issue', 'operator')) as { token: string };
    const { date, time } = startedMinutesAgo(5);
    const blocking = { website_blocker_enabled: true, website_blocker: { mode: 'custom', category: ['social'], urls: ['example.com'] } };
    const id = await createSession(token, { org_id: 1, name: 'Team focus', type: 'standard', duration: 60, schedule: date, time, timezone: 'UTC', is_public: true, ...blocking });

    const { context } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    await signIn(page, web.server.url, 'alice', PASSWORD);
    await page.goto(`${web.server.url}/sessions/${id}`);
    await expect.poll(() => page.getByText('You have not joined this session.').count()).toBe(1);
    // Started 5 minutes ago for an hour: the line under the title tells it by the clock, not by its status ("waiting").
    expect(await page.getByText(/ · running now$/).count()).toBe(1);
    await expectButtons(page, { Join: 1, Leave: 0, Complete: 0 });
    await button(page, 'Join').click();
    await expect.poll(() => page.getByText('You joined as participant.').count()).toBe(1);
    // Joined and running: Now says what is blocked, a category by its name.
    await page.goto(`${web.server.url}/now`);
    await expect.poll(() => page.getByText('Blocked: Social media, example.com', { exact: true }).count(), { timeout: 10_000 }).toBe(1);
    await page.goto(`${web.server.url}/sessions/${id}`);
    await expect.poll(() => page.getByText('You joined as participant.').count()).toBe(1);
    await expectButtons(page, { Join: 0, Leave: 1, Complete: 1 });
    await button(page, 'Leave').click();
    await expect.poll(() => page.getByText('You have not joined this session.').count()).toBe(1);
    await expectButtons(page, { Join: 1, Leave: 0, Complete: 0 });

    // A mistyped address answers 404 with the app's own page, not the API's JSON.
    const missing = await page.goto(`${web.server.url}/sesions/${id}`);
    expect(missing?.status()).toBe(404);
    await expect.poll(() => page.getByRole('heading', { name: 'Page not found', level: 1 }).count()).toBe(1);
    await page.getByRole('link', { name: 'Go to your week' }).click();
    await page.waitForURL(/\/week$/);
    await context.close();
  }, 120_000);

  it('edits a series with the "Apply to" choice, and shows Now, statistics, settings and device approval', async () => {
    const { context, refused } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    await signIn(page, web.server.url, 'alice', PASSWORD);
    const { date } = startedMinutesAgo(0);
    await page.goto(`${web.server.url}/sessions/new?date=${date}`);
    await page.getByLabel('Name', { exact: true }).fill('Daily standup');
    await page.getByLabel('Time', { exact: true }).fill('23:30');
    await page.getByLabel('Repeats').selectOption('daily');
    await button(page, 'Save').click();
    await page.waitForURL(/\/sessions\/\d+\?date=/);
    const group = page.getByRole('radiogroup', { name: 'Apply to' });
    await expect.poll(() => group.count()).toBe(1);
    for (const name of ['This occurrence', 'This and following', 'All occurrences']) expect(await group.getByRole('radio', { name, exact: true }).count(), name).toBe(1);
    await checkPage(page, 'series occurrence');

    // "All occurrences" renames the series: the next day's occurrence has the new name.
    await group.getByRole('radio', { name: 'All occurrences' }).check();
    await page.getByLabel('Name', { exact: true }).fill('Daily sync');
    await button(page, 'Save').click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Daily sync');

    // "This occurrence" renames this day only (an override): the page shows it, the series keeps its name.
    await group.getByRole('radio', { name: 'This occurrence' }).check();
    await page.getByLabel('Name', { exact: true }).fill('Standup, this day');
    await button(page, 'Save').click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Standup, this day');
    const id = /\/sessions\/(\d+)/.exec(page.url())?.[1];
    const series = await page.evaluate(async (path) => (await (await fetch(path)).json()) as { data: { name: string } }, `/api/v1/sessions/${id}`);
    expect(series.data.name).toBe('Daily sync');

    // "This occurrence" with another date moves one day: the day after tomorrow's occurrence takes place a day later.
    const day = (n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
    await page.goto(`${web.server.url}/sessions/${id}?date=${day(2)}`);
    await expect.poll(() => group.count()).toBe(1);
    await group.getByRole('radio', { name: 'This occurrence' }).check();
    await page.getByLabel('Date', { exact: true }).fill(day(3));
    await button(page, 'Save').click();
    const moved = async () => page.evaluate(async (path) => (await (await fetch(path)).json()) as { data: { schedule: string; occurrence_date: string } }, `/api/v1/sessions/${id}?date=${day(2)}`);
    await expect.poll(async () => (await moved()).data.schedule).toBe(day(3));
    expect((await moved()).data.occurrence_date).toBe(day(2));

    await page.getByRole('link', { name: 'Now', exact: true }).click();
    await page.waitForURL(/\/now$/);
    // The event stream opened with the session cookie.
    await expect.poll(() => page.getByText('Live: this page updates by itself.').count(), { timeout: 10_000 }).toBe(1);
    const timer = page.getByRole('timer').first();
    await expect.poll(() => timer.count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const before = await timer.textContent();
    await expect.poll(() => timer.textContent(), { timeout: 5_000 }).not.toBe(before);
    await checkPage(page, 'now');

    await page.getByRole('link', { name: 'Statistics', exact: true }).click();
    await page.waitForURL(/\/stats$/);
    await expect.poll(() => page.locator('svg.chart, [role="alert"]').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    // Day ticks read as dates ("Nov 4"), not as bare "11-04".
    const ticks = (await page.locator('svg.chart text.axis').allTextContents()).filter((t) => !/^\d+$/.test(t));
    expect(ticks.length).toBeGreaterThan(0);
    for (const tick of ticks) expect(tick).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
    await checkPage(page, 'statistics');

    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await page.waitForURL(/\/settings$/);
    await page.getByLabel('Feed name').fill('Work');
    await button(page, 'Create feed').click();
    const webcal = page.getByLabel('Calendar link');
    await expect.poll(() => webcal.count()).toBe(1);
    expect(await webcal.inputValue()).toMatch(/^webcal:\/\/127\.0\.0\.1:\d+\/ical\/.+\.ics$/);
    await checkPage(page, 'settings');

    await page.goto(`${web.server.url}/device?user_code=ABCD-EFGH`);
    // The page renders after its script runs: wait for it rather than count at once.
    for (const name of ['Approve', 'Deny']) await expect.poll(() => button(page, name).count()).toBe(1);
    expect(await page.getByLabel('Code').inputValue()).toBe('ABCD-EFGH');
    // No app asked with this code: nothing to approve.
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/No app is waiting with this code/);
    for (const name of ['Approve', 'Deny']) expect(await button(page, name).isDisabled(), name).toBe(true);
    await checkPage(page, 'device');
    expect(refused).toEqual([]);
    await context.close();
  }, 120_000);

  it('tells someone signed out that an unknown invitation link cannot be used, and offers no form for it', async () => {
    // The pinned names of a usable invitation's form: web-people.test.ts, where bob accepts one.
    const { context } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    await page.goto(`${web.server.url}/invite#not-a-real-token`);
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/This invitation cannot be used/);
    expect(await button(page, 'Accept invitation').count()).toBe(0);
    expect(await page.getByLabel('Password', { exact: true }).count()).toBe(0);
    await checkPage(page, 'unusable invitation');
    await context.close();
  }, 60_000);

  it('fits a 375 px wide phone on every page', async () => {
    // A token to list, with its Revoke, on /settings.
    await focusJson({ DATABASE_URL: web.databaseUrl }, 'tokens', 'issue', 'alice');
    const { context } = await isolatedContext(web.browser, web.server.url, { width: 375, height: 812 });
    const page = await context.newPage();
    await page.goto(`${web.server.url}/sign-in`);
    await expect.poll(() => button(page, 'Sign in').count()).toBe(1);
    await checkPage(page, 'sign-in at 375 px');
    await signIn(page, web.server.url, 'alice', PASSWORD);
    for (const path of ['/week', '/sessions/new', '/now', '/stats', '/settings', '/device']) {
      await page.goto(`${web.server.url}${path}`);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).count()).toBe(1);
      await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
      await checkPage(page, `${path} at 375 px`);
    }
    await context.close();
  }, 120_000);
});
