import { expect, it } from 'vitest';
import { Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { hashPassword } from './accounts.passwords.js';
import { PAIR_FAILURES } from './accounts.throttle.js';
import { browser, signIn } from './accounts.test-helpers.js';

const OLD = 'correct horse battery';
const NEW = 'staple grows tall 42';
const PATH = '/api/v1/me/password';

describeEachDialect('changing your password (PUT /me/password)', (dialect) => {
  const t = useTestApp(dialect, { ann: [1], ben: [1], cal: [1], dee: [1], eve: [1] });
  const withPassword = async (handle: string) => t.storage.db.updateTable('users').set({ password_hash: await hashPassword(OLD) }).where('handle', '=', handle).execute();
  const login = (handle: string, password: string) =>
    t.app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '10.4.0.1', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ handle, password }) });

  it('with the current password: 204; the new one signs in, the old no longer; other browsers are signed out, this one and tokens stay', async () => {
    await withPassword('ann');
    const here = await signIn(t, 'ann', OLD);
    const elsewhere = await signIn(t, 'ann', OLD);
    const changed = await browser(t, 'PUT', PATH, here, { current_password: OLD, new_password: NEW });
    expect(changed.status, changed.text).toBe(204);
    expect((await login('ann', OLD)).statusCode).toBe(401);
    expect((await login('ann', NEW)).statusCode).toBe(204);
    expect((await browser(t, 'GET', '/api/v1/me', elsewhere)).status).toBe(401);
    expect((await browser(t, 'GET', '/api/v1/me', here)).status).toBe(200);
    expect((await t.ann.request('GET', '/api/v1/me')).status).toBe(200);
  });

  it('a token with all rights may change it too (every browser session then ends)', async () => {
    await withPassword('ben');
    const browserSession = await signIn(t, 'ben', OLD);
    expect((await t.ben.request('PUT', PATH, { current_password: OLD, new_password: NEW })).status).toBe(204);
    expect((await browser(t, 'GET', '/api/v1/me', browserSession)).status).toBe(401);
    expect((await login('ben', NEW)).statusCode).toBe(204);
  });

  it('a wrong current password or a short new one is 422 at its field and changes nothing; guessing is throttled', async () => {
    await withPassword('cal');
    const cookie = await signIn(t, 'cal', OLD);
    const wrong = await browser(t, 'PUT', PATH, cookie, { current_password: 'not my password', new_password: NEW });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([{ path: '/current_password', message: 'is not your password' }]);
    const short = await browser(t, 'PUT', PATH, cookie, { current_password: OLD, new_password: 'short' });
    expect(short.status).toBe(422);
    expect(JSON.stringify(short.body.errors)).toContain('/new_password');
    expect((await browser(t, 'PUT', PATH, cookie, { current_password: OLD })).status).toBe(422);
    expect((await login('cal', OLD)).statusCode).toBe(204);
    for (let i = 1; i < PAIR_FAILURES; i++) expect((await browser(t, 'PUT', PATH, cookie, { current_password: `guess ${i}`, new_password: NEW })).status).toBe(422);
    const blocked = await browser(t, 'PUT', PATH, cookie, { current_password: OLD, new_password: NEW });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login('cal', NEW)).statusCode).toBe(401);
  });

  it('a scoped token, another site and nobody are refused; a user of single sign-on has no password to change', async () => {
    await withPassword('dee');
    const made = await t.dee.request('POST', '/api/v1/me/tokens', { name: 'app', scopes: ['me:read', 'sessions:write'] });
    expect(made.status).toBe(201);
    const scoped = new Client(t.app, made.body.data.token as string);
    expect((await scoped.request('PUT', PATH, { current_password: OLD, new_password: NEW })).status).toBe(403);
    const cookie = await signIn(t, 'dee', OLD);
    expect((await browser(t, 'PUT', PATH, cookie, { current_password: OLD, new_password: NEW }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await new Client(t.app).request('PUT', PATH, { current_password: OLD, new_password: NEW })).status).toBe(401);
    expect((await login('dee', OLD)).statusCode).toBe(204);

    // eve has no password (as a user single sign-on made).
    const sso = await t.eve.request('PUT', PATH, { current_password: OLD, new_password: NEW });
    expect(sso.status).toBe(422);
    expect(sso.body.errors[0].message).toMatch(/single sign-on/);
  });
});
