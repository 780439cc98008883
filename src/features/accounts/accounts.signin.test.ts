import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { hashPassword } from './accounts.passwords.js';
import { ADDRESS_FAILURES, PAIR_FAILURES } from './accounts.throttle.js';
import { browser, sessionCookie, signIn } from './accounts.test-helpers.js';

const PASSWORD = 'correct horse battery';

describeEachDialect('sign-in, cookies and the CSRF rule (contract section 12)', (dialect) => {
  const t = useTestApp(dialect, { ann: [1] }, { PUBLIC_URL: 'https://focus.example' });
  const login = (body: unknown, address = '10.0.0.1', headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: address, headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
  const withPassword = async (handle: string) => {
    await t.admin.addUser(handle, [1]);
    await t.storage.db.updateTable('users').set({ password_hash: await hashPassword(PASSWORD) }).where('handle', '=', handle).execute();
  };

  it('the right password: 204 and a session cookie, HttpOnly, SameSite=Lax, Secure (https PUBLIC_URL), 30 days; stored only as a hash', async () => {
    await withPassword('sam');
    const res = await login({ handle: 'sam', password: PASSWORD });
    expect(res.statusCode, res.body).toBe(204);
    const header = String(res.headers['set-cookie']);
    expect(header).toMatch(/^focus_session=fst_[0-9A-Za-z]{38}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=2592000; Secure$/);
    const value = sessionCookie({ status: 204, headers: res.headers, body: undefined, text: '' });
    const rows = await t.storage.db.selectFrom('tokens').selectAll().where('kind', '=', 'session').execute();
    expect(JSON.stringify(rows)).not.toContain(value);
    const me = await browser(t, 'GET', '/api/v1/me', value);
    expect(me.body.data.handle).toBe('sam');
    // Sliding: each answer sends the cookie again with a fresh 30 days.
    expect(String(me.headers['set-cookie'])).toContain('Max-Age=2592000');
  });

  it('one generic 401 for an unknown handle, a wrong password, a user without one; a new value at each sign-in (no fixation)', async () => {
    await withPassword('tim');
    const answers = [
      await login({ handle: 'nobody', password: PASSWORD }, '10.1.0.1'),
      await login({ handle: 'tim', password: 'wrong password!' }, '10.1.0.2'),
      await login({ handle: 'ann', password: PASSWORD }, '10.1.0.3'),
      await login({ handle: 'NOT A HANDLE', password: PASSWORD }, '10.1.0.4'),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(401);
      expect(JSON.parse(res.body).detail).toBe('The handle or the password is wrong.');
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const first = await signIn(t, 'tim', PASSWORD);
    const planted = await browser(t, 'POST', '/auth/login', first, { handle: 'tim', password: PASSWORD });
    const second = sessionCookie(planted);
    expect(second).not.toBe(first);
  });

  it('the same timing for unknown handles: both verify an argon2id hash', async () => {
    await withPassword('uma');
    const time = async (handle: string, address: string) => {
      const start = performance.now();
      await login({ handle, password: 'wrong password!' }, address);
      return performance.now() - start;
    };
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      known.push(await time('uma', `10.2.0.${i}`));
      unknown.push(await time(`ghost${i}`, `10.3.0.${i}`));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2] as number;
    // An unknown handle without the dummy hash would answer in well under a tenth of the time.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.25);
  });

  it('throttle: an address guessing gets 429 for that handle and then for all, yet the owner signs in from elsewhere', async () => {
    await withPassword('vic');
    for (let i = 0; i < PAIR_FAILURES; i++) expect((await login({ handle: 'vic', password: 'guess guess ' + i }, '10.9.9.9')).statusCode).toBe(401);
    const blocked = await login({ handle: 'vic', password: PASSWORD }, '10.9.9.9');
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    await signIn(t, 'vic', PASSWORD, '10.8.8.8');
    for (let i = PAIR_FAILURES; i < ADDRESS_FAILURES; i++) await login({ handle: `h${i}`, password: 'guess guess ' }, '10.9.9.9');
    expect((await login({ handle: 'sam', password: PASSWORD }, '10.9.9.9')).statusCode).toBe(429);
    await signIn(t, 'sam', PASSWORD, '10.8.8.8');
  });

  it('CSRF: a cookie change from another origin or site is 403; reads, same-origin changes and bearer requests are not', async () => {
    await withPassword('wes');
    const cookie = await signIn(t, 'wes', PASSWORD);
    const body = { timezone: 'Europe/Berlin' };
    const foreign: Record<string, string>[] = [
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site', origin: 'https://focus.example' },
      { origin: 'null' },
    ];
    for (const headers of foreign) {
      const res = await browser(t, 'PUT', '/api/v1/me', cookie, body, headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.type).toMatch(/\/problems\/cross-origin$/);
    }
    const bare = await t.app.inject({ method: 'PUT', url: '/api/v1/me', headers: { cookie: `focus_session=${cookie}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    expect(bare.statusCode).toBe(403);
    expect((await browser(t, 'GET', '/api/v1/me', cookie, undefined, { origin: 'https://evil.example' })).status).toBe(200);
    expect((await browser(t, 'PUT', '/api/v1/me', cookie, body)).status).toBe(200);
    expect((await t.ann.request('PUT', '/api/v1/me', body, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(200);
    // A cookie is no bearer token and a bearer token no cookie.
    expect((await t.ann.request('GET', '/api/v1/me', undefined, { authorization: `Bearer ${cookie}` })).status).toBe(401);
    expect((await browser(t, 'GET', '/api/v1/me', t.ann.token)).status).toBe(401);
    // A foreign page cannot sign a visitor in.
    expect((await login({ handle: 'wes', password: PASSWORD }, '10.0.0.7', { origin: 'https://evil.example' })).statusCode).toBe(403);
  });

  it('sign-out ends that session at once; another browser’s stays', async () => {
    await withPassword('xia');
    const one = await signIn(t, 'xia', PASSWORD);
    const two = await signIn(t, 'xia', PASSWORD);
    const out = await browser(t, 'POST', '/auth/logout', one);
    expect(out.status).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^focus_session=; .*Max-Age=0/);
    expect((await browser(t, 'GET', '/api/v1/me', one)).status).toBe(401);
    expect((await browser(t, 'GET', '/api/v1/me', two)).status).toBe(200);
  });
});
