import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, createTestApp, describeEachDialect } from '../../../test/helpers/harness.js';
import { TestBrowser, type TestProvider, startTestProvider } from '../../../test/helpers/oidc-provider.js';
import { createAccountsAdmin } from './accounts.public.js';
import { secretOf } from './accounts.test-helpers.js';

/** How an attempt may be tampered with on its way to the provider (what an attacker between could try). */
type Tamper = (authorization: URL) => void;

describeEachDialect('single sign-on with a real OpenID Connect provider (contract section 12)', (dialect) => {
  let provider: TestProvider;
  let t: TestApp;
  let origin: string;

  beforeAll(async () => {
    provider = await startTestProvider();
    t = await createTestApp(dialect, { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    provider.register(`${origin}/auth/oidc/callback`);
    provider.accounts.set('p-ann', { email: 'Ann@Example.org', email_verified: true });
    provider.accounts.set('p-unverified', { email: 'bob@example.org', email_verified: false });
    provider.accounts.set('p-stranger', { email: 'stranger@example.org', email_verified: true });
    provider.accounts.set('p-newcomer', { email: 'new.comer+x@example.org', email_verified: true });
    provider.accounts.set('p-cat', { email: 'cat@example.org', email_verified: true });
    await t.admin.addUser('ann', [1]);
    await t.admin.setEmail('ann', 'ann@example.org');
    await t.admin.addUser('bob', [1]);
    await t.admin.setEmail('bob', 'bob@example.org');
    await t.admin.addUser('cat', [1]);
    await t.admin.setEmail('cat', 'cat@example.org');
    await t.admin.setDisabled('cat', true);
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  /**
   * One sign-on as `subject`, as a browser does it: our start, the provider's login and
   * consent, back to our callback. Returns where the callback sent the browser, and its cookie.
   */
  async function toCallback(subject: string, options: { query?: string; tamper?: Tamper } = {}) {
    const browser = new TestBrowser();
    provider.signInAs(subject);
    const start = await browser.get(`${origin}/auth/oidc/start${options.query ?? ''}`);
    expect(start.status, start.text).toBe(302);
    const authorization = new URL(start.location as string);
    expect(authorization.origin).toBe(provider.issuer);
    options.tamper?.(authorization);
    return { browser, callback: await browser.follow(authorization.href, (next) => next.origin === origin) };
  }
  async function signOn(subject: string, options: { query?: string; tamper?: Tamper } = {}) {
    const { browser, callback } = await toCallback(subject, options);
    const done = await browser.get(callback.href);
    expect(done.status, done.text).toBe(302);
    return { location: done.location, session: browser.cookies.get('focus_session'), browser, callback };
  }

  const me = async (session: string | undefined) => {
    const res = await fetch(`${origin}/api/v1/me`, { headers: { cookie: `focus_session=${session}` } });
    return { status: res.status, body: (await res.json()) as { data: { handle: string; org_ids: number[] } } };
  };
  const refused = (result: { location: string | undefined; session: string | undefined }) => {
    expect(result.location).toBe(`${origin}/sign-in?error=sso`);
    expect(result.session).toBeUndefined();
  };

  it('says it is offered; a verified email an operator set signs that user in with the session cookie, then to /', async () => {
    const status = await fetch(`${origin}/auth/oidc`);
    expect(status.status).toBe(200);
    expect(await status.json()).toEqual({ data: { enabled: true } });
    const start = await new TestBrowser().get(`${origin}/auth/oidc/start`);
    const authorization = new URL(start.location as string);
    for (const name of ['state', 'nonce', 'code_challenge']) expect(authorization.searchParams.get(name)).toBeTruthy();
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');

    const result = await signOn('p-ann');
    expect(result.location).toBe(`${origin}/`);
    expect(result.browser.cookies.has('focus_oidc')).toBe(false);
    const answer = await me(result.session);
    expect(answer.status).toBe(200);
    expect(answer.body.data.handle).toBe('ann');
    // Discovery happened once for every attempt of this process.
    expect(provider.discoveries()).toBe(1);
  });

  it('a callback whose state is not the browser’s is refused: tampered on the way, or finished by another browser', async () => {
    refused(await signOn('p-ann', { tamper: (url) => url.searchParams.set('state', 'forged-state-value') }));
    // An attacker's own attempt, finished in a victim's browser (login CSRF): the victim has no attempt cookie.
    const { callback } = await toCallback('p-ann');
    const victim = new TestBrowser();
    const done = await victim.get(callback.href);
    expect(done.location).toBe(`${origin}/sign-in?error=sso`);
    expect(victim.cookies.get('focus_session')).toBeUndefined();
  });

  it('a tampered nonce or PKCE challenge is refused', async () => {
    refused(await signOn('p-ann', { tamper: (url) => url.searchParams.set('nonce', 'nonce-chosen-by-someone-else') }));
    const otherChallenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    refused(await signOn('p-ann', { tamper: (url) => url.searchParams.set('code_challenge', otherChallenge) }));
  });

  it('a callback can be used once: replaying it is refused', async () => {
    const first = await signOn('p-ann');
    expect(first.location).toBe(`${origin}/`);
    // Even with the attempt's cookie put back: the attempt is gone.
    first.browser.cookies.set('focus_oidc', first.callback.searchParams.get('state') as string);
    const replay = await first.browser.get(first.callback.href);
    expect(replay.location).toBe(`${origin}/sign-in?error=sso`);
  });

  it('an email the provider has not verified, that no user has, or of a disabled user is refused and creates nothing', async () => {
    const users = async () => (await t.storage.db.selectFrom('users').select('handle').execute()).length;
    const before = await users();
    refused(await signOn('p-unverified'));
    refused(await signOn('p-stranger'));
    refused(await signOn('p-cat'));
    expect(await users()).toBe(before);
  });

  it('through an invitation a new user is made from the verified email and joins the org; the link then is used', async () => {
    await t.admin.addUser('admin', [7], { admin: true });
    const invite = await createAccountsAdmin(t.storage).inviteFromCli(7, origin);
    const secret = secretOf((invite as { url: string }).url);
    const result = await signOn('p-newcomer', { query: `?invite=${encodeURIComponent(secret)}` });
    expect(result.location).toBe(`${origin}/`);
    const answer = await me(result.session);
    expect(answer.body.data.handle).toBe('new.comerx');
    expect(answer.body.data.org_ids).toEqual([7]);
    const row = await t.storage.db.selectFrom('users').select(['email', 'password_hash']).where('handle', '=', 'new.comerx').executeTakeFirstOrThrow();
    expect(row).toEqual({ email: 'new.comer+x@example.org', password_hash: null });
    // The link worked once: a stranger bringing it later is refused.
    refused(await signOn('p-stranger', { query: `?invite=${encodeURIComponent(secret)}` }));
    // A known user bringing an invitation joins its org too.
    const another = await createAccountsAdmin(t.storage).inviteFromCli(7, origin);
    const ann = await signOn('p-ann', { query: `?invite=${encodeURIComponent(secretOf((another as { url: string }).url))}` });
    expect((await me(ann.session)).body.data).toMatchObject({ handle: 'ann', org_ids: [1, 7] });
  });

  it('under a PUBLIC_URL with a path, sends the provider back below it and keeps the attempt cookie and redirects there', async () => {
    const behind = await createTestApp(dialect, { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, OIDC_CLIENT_SECRET: provider.clientSecret, PUBLIC_URL: 'https://focus.example.com/team' });
    try {
      const start = await behind.app.inject({ method: 'GET', url: '/auth/oidc/start' });
      expect(start.statusCode, start.body).toBe(302);
      expect(new URL(start.headers.location as string).searchParams.get('redirect_uri')).toBe('https://focus.example.com/team/auth/oidc/callback');
      expect(String(start.headers['set-cookie'])).toMatch(/^focus_oidc=[^;]+; Path=\/team\/auth\/oidc; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/);
      const back = await behind.app.inject({ method: 'GET', url: '/auth/oidc/callback?state=forged&code=x' });
      expect(back.headers.location).toBe('/team/sign-in?error=sso');
    } finally {
      await behind.close();
    }
  });
});

describeEachDialect('single sign-on not configured', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('every route answers 404 like an unknown path', async () => {
    for (const url of ['/auth/oidc', '/auth/oidc/start', '/auth/oidc/start?invite=', '/auth/oidc/callback?code=x&state=y']) {
      const res = await t.anonymous.get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });
});
