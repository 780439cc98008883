import { describe, expect, it } from 'vitest';
import { CHROMIUM_SKIP_NOTICE, chromiumAvailable } from '../helpers/browser.js';
import { focusJson } from '../helpers/server-process.js';
import { useWebScene } from './web-seed.js';
import { button, checkPage, createSessionAs, isolatedContext, signIn } from './web-pages.js';

/*
 * The session form in chromium on a real server process: which zone its date and time are
 * in, where a new session starts, website blocking and snoozing, and a refused field marked.
 */

const available = chromiumAvailable();
const PASSWORD = 'correct horse battery';

describe.skipIf(!available)(available ? 'session form in chromium' : `session form in chromium: ${CHROMIUM_SKIP_NOTICE}`, () => {
  const web = useWebScene(PASSWORD);
  const createSession = (token: string, body: Record<string, unknown>) => createSessionAs(web.server.url, token, body);

  it("tells the day in the home zone and which zone the form's date and time are in, and changes the zone", async () => {
    // 08:00 on 2030-03-02 in Tokyo is 23:00 on 2030-03-01 in UTC, alice's home zone.
    const { token } = (await focusJson({ DATABASE_URL: web.databaseUrl }, 'tokens', 'issue', 'alice')) as { token: string };
    const id = await createSession(token, { org_id: 1, name: 'Tokyo sync', type: 'standard', duration: 30, schedule: '2030-03-02', time: '8:00 AM', timezone: 'Asia/Tokyo', is_public: false });

    const { context } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    await signIn(page, web.server.url, 'alice', PASSWORD);
    await page.goto(`${web.server.url}/sessions/${id}`);
    await expect.poll(() => page.getByText(/^Friday, March 1 at 11:00 PM \(8:00 AM in Asia\/Tokyo\) · 30 min · created by alice · \d+ joined · upcoming$/).count()).toBe(1);
    const time = page.getByLabel('Time', { exact: true });
    expect(await time.inputValue()).toBe('08:00');
    expect(await page.getByLabel('Date', { exact: true }).inputValue()).toBe('2030-03-02');
    await expect.poll(() => time.getAttribute('aria-describedby')).toBe('f-zone');
    expect(await page.locator('#f-zone').textContent()).toBe("Date and time in the session's time zone, Asia/Tokyo (your home time zone is UTC).");
    await checkPage(page, 'session in another zone');

    // Moving it to New York keeps its wall clock there: 08:00 on 2 March in New York is 13:00 UTC.
    const zone = page.getByLabel('Time zone', { exact: true });
    expect(await zone.inputValue()).toBe('Asia/Tokyo');
    await zone.selectOption('America/New_York');
    expect(await page.locator('#f-zone').textContent()).toBe("Date and time in the session's time zone, America/New_York (your home time zone is UTC).");
    await button(page, 'Save').click();
    await expect.poll(() => page.getByText(/^Saturday, March 2 at 1:00 PM \(8:00 AM in America\/New_York\) · 30 min/).count()).toBe(1);
    const read = async (path: string) => page.evaluate(async (p) => ((await (await fetch(p)).json()) as { data: { timezone: string; time: string; schedule: string } }).data, path);
    expect(await read(`/api/v1/sessions/${id}`)).toMatchObject({ timezone: 'America/New_York', time: '8:00 AM', schedule: '2030-03-02' });

    await page.goto(`${web.server.url}/sessions/new?date=2030-03-04`);
    await expect.poll(() => page.locator('#f-zone').textContent()).toBe('Date and time in your home time zone, UTC.');
    expect(await page.getByLabel('Time zone', { exact: true }).inputValue()).toBe('UTC');
    await page.getByLabel('Name', { exact: true }).fill('Tokyo standup');
    await page.getByLabel('Time zone', { exact: true }).selectOption('Asia/Tokyo');
    await button(page, 'Save').click();
    await page.waitForURL(/\/sessions\/\d+$/);
    const created = /\/sessions\/(\d+)/.exec(page.url())?.[1];
    expect(await read(`/api/v1/sessions/${created}`)).toMatchObject({ timezone: 'Asia/Tokyo', time: '9:00 AM', schedule: '2030-03-04' });

    // On today's date a new session starts at the next half hour, not at a 09:00 mostly past; late in the day, tomorrow.
    const newOn = async (now: string) => {
      await page.clock.setFixedTime(new Date(now));
      await page.goto(`${web.server.url}/sessions/new?date=2030-03-04`);
      await expect.poll(() => page.getByLabel('Name', { exact: true }).count()).toBe(1);
      return [await page.getByLabel('Date', { exact: true }).inputValue(), await page.getByLabel('Time', { exact: true }).inputValue()];
    };
    expect(await newOn('2030-03-04T14:07:00Z')).toEqual(['2030-03-04', '14:30']);
    expect(await newOn('2030-03-04T14:27:00Z')).toEqual(['2030-03-04', '15:00']);
    expect(await newOn('2030-03-04T23:40:00Z')).toEqual(['2030-03-05', '09:00']);
    expect(await newOn('2030-03-02T10:00:00Z')).toEqual(['2030-03-04', '09:00']);
    await context.close();
  }, 120_000);

  it('sets website blocking and snoozing for a series, and for one occurrence only what changed', async () => {
    const { context } = await isolatedContext(web.browser, web.server.url);
    const page = await context.newPage();
    await signIn(page, web.server.url, 'alice', PASSWORD);
    await page.goto(`${web.server.url}/sessions/new?date=2030-04-01`);
    await page.getByLabel('Name', { exact: true }).fill('Writing');
    await page.getByLabel('Repeats').selectOption('daily');
    await page.getByLabel('Block websites').check();
    await page.getByLabel('Social media').check();
    const sites = page.getByLabel('Other sites to block');
    await page.getByLabel('Snooze notifications').check();
    await page.getByLabel('Apps to snooze').fill('Slack');
    // A site the server refuses: its sentence names the list as the form does, and the list is marked.
    await sites.fill('example.com\nnot a host!');
    await button(page, 'Save').click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/^Site to block \(item 2\) must be a host name or an http\(s\) URL/);
    expect(await sites.getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Apps to snooze').getAttribute('aria-invalid')).toBeNull();
    await sites.fill('example.com\n\nhttps://news.example.org/today\n');
    await checkPage(page, 'new session with blocking');
    await button(page, 'Save').click();
    await page.waitForURL(/\/sessions\/\d+\?date=2030-04-01$/);
    const id = /\/sessions\/(\d+)/.exec(page.url())?.[1];
    type Focus = { name: string; website_blocker_enabled: boolean; website_blocker: unknown; snooze_enabled: boolean; snooze_apps: unknown };
    const read = (date: string) => page.evaluate(async (path) => ((await (await fetch(path)).json()) as { data: Focus }).data, `/api/v1/sessions/${id}?date=${date}`);
    expect(await read('2030-04-01')).toMatchObject({
      website_blocker_enabled: true,
      website_blocker: { mode: 'custom', category: ['social'], urls: ['example.com', 'https://news.example.org/today'] },
      snooze_enabled: true,
      snooze_apps: { Slack: true },
    });

    // One day without snoozing: only that field becomes the occurrence's own, so a later rename of the series still reaches it.
    await page.goto(`${web.server.url}/sessions/${id}?date=2030-04-02`);
    const group = page.getByRole('radiogroup', { name: 'Apply to' });
    await expect.poll(() => group.count()).toBe(1);
    await group.getByRole('radio', { name: 'This occurrence' }).check();
    await page.getByLabel('Snooze notifications').uncheck();
    await button(page, 'Save').click();
    await expect.poll(async () => (await read('2030-04-02')).snooze_enabled).toBe(false);
    await group.getByRole('radio', { name: 'All occurrences' }).check();
    await page.getByLabel('Name', { exact: true }).fill('Writing time');
    await button(page, 'Save').click();
    await expect.poll(async () => (await read('2030-04-02')).name).toBe('Writing time');
    expect(await read('2030-04-02')).toMatchObject({ snooze_enabled: false, website_blocker_enabled: true });
    expect(await read('2030-04-03')).toMatchObject({ name: 'Writing time', snooze_enabled: true });
    await context.close();
  }, 120_000);
});
