import { describe, expect, it } from 'vitest';
import { CHROMIUM_SKIP_NOTICE, chromiumAvailable } from '../helpers/browser.js';
import { focusJson } from '../helpers/server-process.js';
import { button, checkPage, isolatedContext, signIn } from './web-pages.js';
import { useWebScene } from './web-seed.js';

/*
 * People and apps through the web app (contract section 12), in chromium against a real
 * server: an admin invites a person from Settings, the person accepts the link and is
 * signed in, then approves the code an app asked for on /device, and the app's token
 * works within its scope only.
 */

const available = chromiumAvailable();
const ADMIN_PASSWORD = 'correct horse battery';

describe.skipIf(!available)(available ? 'people in the web app' : `people in the web app: ${CHROMIUM_SKIP_NOTICE}`, () => {
  const web = useWebScene(ADMIN_PASSWORD);


  let bob: Awaited<ReturnType<typeof isolatedContext>> | undefined;

  it('an admin makes a scoped token and invites a person from Settings, who accepts the link once and is signed in', async () => {
    // A browser far from alice's home zone (UTC): the page's times are in the home zone, as everywhere in the app.
    const admin = await isolatedContext(web.browser, web.server.url, undefined, 'Pacific/Auckland');
    const page = await admin.context.newPage();
    await signIn(page, web.server.url, 'alice', ADMIN_PASSWORD);
    await page.getByRole('link', { name: 'Settings', exact: true }).click();
    await expect.poll(() => button(page, 'Invite someone').count(), { timeout: 10_000 }).toBe(1);
    await button(page, 'Invite someone').click();
    const linkField = page.getByLabel('Invitation link');
    await expect.poll(() => linkField.count()).toBe(1);
    const link = await linkField.inputValue();
    expect(link).toMatch(/\/invite#.+/);
    // Only a pending invitation tells when it expires; alice's own, accepted, tells when it was sent.
    await expect.poll(() => page.getByText(/^Pending, expires /).count()).toBe(1);
    const listed = await page.evaluate(async () => ((await (await fetch('/api/v1/orgs/1/invites')).json()) as { data: { status: string; expires_at: string }[] }).data);
    const pending = listed.find((i) => i.status === 'pending')?.expires_at ?? '';
    const inUtc = new Date(pending).toLocaleString('en-US', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' });
    expect(await page.getByText(/^Pending, expires /).textContent()).toBe(`Pending, expires ${inUtc}`);
    expect(await page.getByText(/^Invitation created; it expires /).textContent()).toBe(`Invitation created; it expires ${inUtc}.`);
    expect(await page.getByText(/^Accepted; sent /).count()).toBe(1);
    await checkPage(page, 'settings as an admin');

    // A personal token with the scopes ticked by default (sessions:read, me:read), shown once;
    // each scope says what it allows, in the words the device page uses.
    expect(await page.getByLabel('sessions:read: see the sessions you can see', { exact: true }).isChecked()).toBe(true);
    expect(await page.getByLabel('tasks:write: see, create and change your tasks', { exact: true }).isChecked()).toBe(false);
    await page.getByLabel('Token name').fill('Laptop');
    await button(page, 'Create token').click();
    const shown = page.getByLabel('New token');
    await expect.poll(() => shown.count()).toBe(1);
    const token = await shown.inputValue();
    expect(token).toMatch(/^fst_/);
    await expect.poll(() => button(page, 'Revoke Laptop').count()).toBe(1);
    const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    expect((await fetch(`${web.server.url}/api/v1/me`, { headers: bearer })).status).toBe(200);
    const write = await fetch(`${web.server.url}/api/v1/tasks`, { method: 'POST', headers: bearer, body: JSON.stringify({ session_id: 1, context: 'x' }) });
    expect(write.status).toBe(403);

    const guest = await isolatedContext(web.browser, web.server.url);
    bob = guest;
    const bobPage = await guest.context.newPage();
    await bobPage.goto(link);
    await bobPage.getByLabel('Handle', { exact: true }).fill('bob');
    await bobPage.getByLabel('Password', { exact: true }).fill('bobs long password');
    await checkPage(bobPage, 'invitation');
    await button(bobPage, 'Accept invitation').click();
    await bobPage.waitForURL(/\/week$/);
    // The link works once.
    await bobPage.goto(link);
    await expect.poll(() => bobPage.getByRole('alert').count()).toBeGreaterThan(0);
    await page.reload();
    await expect.poll(() => page.getByText(/^Accepted; sent /).count()).toBe(2);
    expect(await page.getByText(/^Pending/).count()).toBe(0);
    expect(admin.refused).toEqual([]);
    expect(guest.refused).toEqual([]);
    await admin.context.close();
  }, 120_000);

  it('the invited person approves the code an app asked for, and the app’s token keeps to its scope', async () => {
    // An app asks for a code (RFC 8628); bob approves it in the web app.
    const asked = await fetch(`${web.server.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'Desk blocker', scope: 'me:read sessions:read' }),
    });
    expect(asked.status).toBe(200);
    if (bob === undefined) throw new Error('the invitation test did not sign bob in');
    const bobPage = await bob.context.newPage();
    const grant = (await asked.json()) as { device_code: string; user_code: string; verification_uri_complete: string };
    await bobPage.goto(grant.verification_uri_complete.replace(/^https?:\/\/[^/]+/, web.server.url));
    expect(await bobPage.getByLabel('Code').inputValue()).not.toBe('');
    // Before approving, bob sees which app asks and for what.
    await expect.poll(() => bobPage.getByText('Desk blocker', { exact: true }).count()).toBe(1);
    const asks = await bobPage.getByRole('listitem').allTextContents();
    expect(asks.some((a) => a.includes('(me:read)')) && asks.some((a) => a.includes('(sessions:read)'))).toBe(true);
    await checkPage(bobPage, 'device');
    await button(bobPage, 'Approve').click();
    await expect.poll(() => bobPage.getByRole('status').filter({ hasText: 'Approved' }).count()).toBe(1);

    const token = await fetch(`${web.server.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: grant.device_code, client_id: 'Desk blocker' }),
    });
    expect(token.status).toBe(200);
    const { access_token } = (await token.json()) as { access_token: string };
    const me = await fetch(`${web.server.url}/api/v1/me`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(200);
    const write = await fetch(`${web.server.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 1, context: 'not allowed' }),
    });
    expect(write.status).toBe(403);

    // The app is listed under "Connected apps".
    await bobPage.goto(`${web.server.url}/settings`);
    await expect.poll(() => bobPage.getByText('Desk blocker').count(), { timeout: 10_000 }).toBeGreaterThan(0);

    // bob is also signed in on another computer, looking at his statistics.
    const elsewhere = await isolatedContext(web.browser, web.server.url);
    const otherPage = await elsewhere.context.newPage();
    await signIn(otherPage, web.server.url, 'bob', 'bobs long password');
    await otherPage.getByRole('link', { name: 'Statistics', exact: true }).click();
    await expect.poll(() => otherPage.getByRole('heading', { level: 1 }).textContent()).toMatch(/statistics/i);

    // And, in a third browser, he has an invitation to team 2 open (its secret in the fragment).
    const env = { DATABASE_URL: web.databaseUrl };
    await focusJson(env, 'users', 'add', 'operator', '--org', '2', '--admin');
    const invitation = new URL(((await focusJson(env, 'invite', '2')) as { url: string }).url).hash;
    const third = await isolatedContext(web.browser, web.server.url);
    const invitePage = await third.context.newPage();
    await signIn(invitePage, web.server.url, 'bob', 'bobs long password');
    await invitePage.goto(`${web.server.url}/invite${invitation}`);
    await expect.poll(() => invitePage.getByText('You are signed in as bob: accepting adds this team to your account.').count()).toBe(1);

    // bob changes his password: a wrong current one is refused at its field; then the new one signs in and the old no longer.
    await bobPage.getByLabel('Current password').fill('not bobs password');
    await bobPage.getByLabel('New password').fill('bobs newer password');
    await button(bobPage, 'Change password').click();
    await expect.poll(() => bobPage.getByRole('alert').filter({ hasText: 'Current password is not your password.' }).count()).toBe(1);
    // The field the server named is marked (aria-invalid, a red border); the other is not.
    expect(await bobPage.getByLabel('Current password').getAttribute('aria-invalid')).toBe('true');
    expect(await bobPage.getByLabel('New password').getAttribute('aria-invalid')).toBeNull();
    await bobPage.getByLabel('Current password').fill('bobs long password');
    await button(bobPage, 'Change password').click();
    await expect.poll(() => bobPage.getByRole('status').filter({ hasText: 'Password changed.' }).count()).toBe(1);
    expect(await bobPage.getByLabel('Current password').inputValue()).toBe('');
    expect(await bobPage.getByLabel('Current password').getAttribute('aria-invalid')).toBeNull();
    await checkPage(bobPage, 'settings after a password change');
    const signInWith = async (password: string) =>
      (await fetch(`${web.server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ handle: 'bob', password }) })).status;
    expect(await signInWith('bobs long password')).toBe(401);
    expect(await signInWith('bobs newer password')).toBe(204);

    // That session has ended: its next request leads to sign-in, which says why and returns to the page.
    await otherPage.getByRole('link', { name: 'Settings', exact: true }).click();
    await expect.poll(() => new URL(otherPage.url()).pathname).toBe('/sign-in');
    expect(new URL(otherPage.url()).searchParams.get('next')).toBe('/settings');
    await expect.poll(() => otherPage.getByRole('status').filter({ hasText: 'Your session has ended' }).count()).toBe(1);
    await checkPage(otherPage, 'sign-in after the session ended');
    await otherPage.getByLabel('Handle').fill('bob');
    await otherPage.getByLabel('Password').fill('bobs newer password');
    await button(otherPage, 'Sign in').click();
    await expect.poll(() => new URL(otherPage.url()).pathname).toBe('/settings');
    await expect.poll(() => otherPage.getByRole('status').filter({ hasText: 'Your session has ended' }).count()).toBe(0);
    expect(elsewhere.refused).toEqual([]);
    await elsewhere.context.close();

    // The invitation page's session ended too: after signing in again it comes back with its secret (which stays
    // in fragments, never in a URL a server sees), and accepting works.
    await button(invitePage, 'Accept invitation').click();
    await expect.poll(() => new URL(invitePage.url()).pathname).toBe('/sign-in');
    expect(new URL(invitePage.url()).searchParams.get('next')).toBe('/invite');
    expect(new URL(invitePage.url()).hash).toBe(invitation);
    await invitePage.getByLabel('Handle').fill('bob');
    await invitePage.getByLabel('Password').fill('bobs newer password');
    await button(invitePage, 'Sign in').click();
    await expect.poll(() => invitePage.url()).toBe(`${web.server.url}/invite${invitation}`);
    await button(invitePage, 'Accept invitation').click();
    await invitePage.waitForURL(/\/week$/);
    const orgs = await invitePage.evaluate(async () => ((await (await fetch('/api/v1/me')).json()) as { data: { org_ids: number[] } }).data.org_ids);
    expect(orgs).toEqual([1, 2]);
    expect(third.refused).toEqual([]);
    await third.context.close();

    // `next` leads only within the app: a path that browsers read as another host leads to the week instead.
    for (const next of ['//elsewhere.example/x', '/\\elsewhere.example/x', 'https://elsewhere.example/']) {
      const stranger = await isolatedContext(web.browser, web.server.url);
      const page = await stranger.context.newPage();
      await page.goto(`${web.server.url}/sign-in?next=${encodeURIComponent(next)}`);
      await page.getByLabel('Handle', { exact: true }).fill('bob');
      await page.getByLabel('Password', { exact: true }).fill('bobs newer password');
      await button(page, 'Sign in').click();
      await expect.poll(() => page.url(), { message: next }).toBe(`${web.server.url}/week`);
      expect(stranger.refused).toEqual([]);
      await stranger.context.close();
    }
    expect(bob.refused).toEqual([]);
    await bob.context.close();
  }, 120_000);
});
