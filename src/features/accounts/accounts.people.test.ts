import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { browser, secretOf, sessionCookie, signIn } from './accounts.test-helpers.js';

describeEachDialect('people: roles, invitations, accounts, removal (contract section 12)', (dialect) => {
  const t = useTestApp(dialect, { member: [1], outsider: [2] }, { PUBLIC_URL: 'https://focus.example' });
  const admin = async () => {
    await t.admin.addUser('boss', [1], { admin: true });
    return t.user('boss', [1]);
  };

  it('an admin invites: a one-time link valid 7 days, only its hash stored; members and outsiders cannot', async () => {
    const boss = await admin();
    const before = Date.now();
    const res = await boss.post('/api/v1/orgs/1/invites');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.url).toMatch(/^https:\/\/focus\.example\/invite#[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(res.body.data.expires_at) - before;
    expect(lifetime).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(7 * 86_400_000 + 1000);
    const stored = await t.storage.db.selectFrom('invites').select('secret_hash').execute();
    expect(JSON.stringify(stored)).not.toContain(secretOf(res.body.data.url));
    expect((await t.member.post('/api/v1/orgs/1/invites')).status).toBe(403);
    expect((await t.outsider.post('/api/v1/orgs/1/invites')).status).toBe(404);
    expect((await t.member.get('/api/v1/orgs/1/members')).status).toBe(403);
    const listed = await boss.get('/api/v1/orgs/1/invites');
    expect(listed.body.data[0]).toMatchObject({ id: res.body.data.id, status: 'pending' });
    expect(listed.text).not.toContain(secretOf(res.body.data.url));
  });

  it('a person accepts once: chooses a handle and password (argon2id), is signed in, and the link then is 404', async () => {
    const boss = await admin();
    const { url } = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    const short = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(url), handle: 'newbie', password: 'short' });
    expect(short.status).toBe(422);
    const taken = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(url), handle: 'member', password: 'long enough pass' });
    expect(taken.status).toBe(422);
    expect(taken.body.errors).toEqual([{ path: '/handle', message: 'is taken: choose another' }]);
    const preview = await browser(t, 'POST', '/auth/invites/preview', undefined, { secret: secretOf(url) });
    expect(preview.body.data.org_id).toBe(1);
    const res = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(url), handle: 'newbie', password: 'long enough pass' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { handle: 'newbie', org_id: 1 } });
    const cookie = /focus_session=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1];
    expect((await browser(t, 'GET', '/api/v1/me', cookie)).body.data).toMatchObject({ handle: 'newbie', org_ids: [1] });
    const row = await t.storage.db.selectFrom('users').select('password_hash').where('handle', '=', 'newbie').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    const again = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(url), handle: 'other', password: 'long enough pass' });
    expect(again.status).toBe(404);
    expect((await boss.get('/api/v1/orgs/1/invites')).body.data.find((i: { status: string }) => i.status === 'accepted')).toBeTruthy();
    await signIn(t, 'newbie', 'long enough pass');
  });

  it('a signed-in user just joins; revoked and expired links are 404', async () => {
    const boss = await admin();
    const { url } = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    const joined = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(url) }, { authorization: `Bearer ${t.outsider.token}` });
    expect(joined.body).toEqual({ data: { handle: 'outsider', org_id: 1 } });
    expect((await t.outsider.get('/api/v1/me')).body.data.org_ids).toEqual([1, 2]);
    await t.admin.removeMembership('outsider', 1);

    // A session or token that no longer signs anyone in, relied on to join: 401 (not "handle is required"), and the link keeps.
    const first = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    const cookie = sessionCookie(await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(first.url), handle: 'joiner', password: 'long enough pass' }));
    expect((await browser(t, 'POST', '/auth/logout', cookie)).status).toBe(204);
    const kept = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    const ended = await browser(t, 'POST', '/auth/invites/accept', cookie, { secret: secretOf(kept.url) });
    expect(ended.status, ended.text).toBe(401);
    const revokedToken = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(kept.url) }, { authorization: 'Bearer fst_revokedrevokedrevokedrevokedrevoked00' });
    expect(revokedToken.status).toBe(401);
    expect(revokedToken.headers['www-authenticate']).toContain('invalid_token');
    expect((await boss.get('/api/v1/orgs/1/invites')).body.data.find((i: { id: number }) => i.id === kept.id)).toMatchObject({ status: 'pending' });
    // With a handle and password it is a new account whatever cookie the browser still holds.
    const fresh = await browser(t, 'POST', '/auth/invites/accept', cookie, { secret: secretOf(kept.url), handle: 'fresh', password: 'long enough pass' });
    expect(fresh.status, fresh.text).toBe(200);

    const revoked = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    expect((await boss.delete(`/api/v1/orgs/1/invites/${revoked.id}`)).status).toBe(204);
    expect((await boss.delete(`/api/v1/orgs/1/invites/${revoked.id}`)).status).toBe(404);
    const expired = (await boss.post('/api/v1/orgs/1/invites')).body.data;
    await t.storage.db.updateTable('invites').set({ expires_at: '2020-01-01T00:00:00.000Z' }).where('id', '=', expired.id).execute();
    for (const invite of [revoked, expired, { url: '/invite#nonsense' }]) {
      const res = await browser(t, 'POST', '/auth/invites/accept', undefined, { secret: secretOf(invite.url), handle: 'late', password: 'long enough pass' });
      expect(res.status).toBe(404);
    }
  });

  it('removing a member: their tokens and browser sessions lose the org at once; the last admin stays', async () => {
    const boss = await admin();
    const gone = await t.user('leaver', [1, 3]);
    await t.storage.db.updateTable('users').set({ password_hash: (await t.storage.db.selectFrom('users').select('password_hash').where('handle', '=', 'newbie').executeTakeFirstOrThrow()).password_hash }).where('handle', '=', 'leaver').execute();
    const cookie = await signIn(t, 'leaver', 'long enough pass');
    expect((await gone.get('/api/v1/me')).body.data.org_ids).toEqual([1, 3]);
    expect((await boss.delete('/api/v1/orgs/1/members/leaver')).status).toBe(204);
    expect((await gone.get('/api/v1/me')).body.data.org_ids).toEqual([3]);
    expect((await browser(t, 'GET', '/api/v1/me', cookie)).body.data.org_ids).toEqual([3]);
    expect((await boss.delete('/api/v1/orgs/1/members/leaver')).status).toBe(404);
    expect((await boss.get('/api/v1/orgs/1/members')).body.data).not.toContainEqual({ handle: 'leaver', role: 'member' });
    expect((await boss.delete('/api/v1/orgs/1/members/boss')).status).toBe(409);
  });

  it('an admin changes roles: the new admin manages people at once; the last admin stays; members cannot', async () => {
    const boss = await admin();
    expect((await t.member.post('/api/v1/orgs/1/invites')).status).toBe(403);
    expect((await t.member.patch('/api/v1/orgs/1/members/member', { role: 'admin' })).status).toBe(403);
    expect((await t.outsider.patch('/api/v1/orgs/1/members/member', { role: 'admin' })).status).toBe(404);
    const promoted = await boss.patch('/api/v1/orgs/1/members/member', { role: 'admin' });
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body.data).toEqual({ handle: 'member', role: 'admin' });
    expect((await t.member.post('/api/v1/orgs/1/invites')).status).toBe(201);
    for (const [body, status] of [[{ role: 'owner' }, 422], [{}, 422], [{ role: 'admin', extra: 1 }, 422]] as const) {
      expect((await boss.patch('/api/v1/orgs/1/members/member', body)).status).toBe(status);
    }
    expect((await boss.patch('/api/v1/orgs/1/members/nobody', { role: 'admin' })).status).toBe(404);
    expect((await boss.patch('/api/v1/orgs/1/members/outsider', { role: 'admin' })).status).toBe(404);
    // Both admins demote each other at once: one wins, the org keeps an admin.
    const both = await Promise.all([boss.patch('/api/v1/orgs/1/members/member', { role: 'member' }), t.member.patch('/api/v1/orgs/1/members/boss', { role: 'member' })]);
    // The loser is refused as the last admin (409), or as no longer an admin when the winner committed first (403).
    expect(both.filter((r) => r.status === 200)).toHaveLength(1);
    expect(both.map((r) => r.status).filter((s) => s !== 200)[0]).toBeOneOf([403, 409]);
    const roles = (await t.storage.db.selectFrom('memberships').select('role').where('org_id', '=', 1).where('role', '=', 'admin').execute()).length;
    expect(roles).toBe(1);
    const last = both[0].status === 200 ? boss : t.member;
    const lastHandle = both[0].status === 200 ? 'boss' : 'member';
    const demoted = both[0].status === 200 ? t.member : boss;
    expect((await demoted.post('/api/v1/orgs/1/invites')).status).toBe(403);
    const refused = await last.patch(`/api/v1/orgs/1/members/${lastHandle}`, { role: 'member' });
    expect(refused.status).toBe(409);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await last.patch(`/api/v1/orgs/1/members/${lastHandle}`, { role: 'admin' })).body.data.role).toBe('admin');
    // Two admins removing each other at once: the same lock keeps one.
    expect((await last.patch(`/api/v1/orgs/1/members/${lastHandle === 'boss' ? 'member' : 'boss'}`, { role: 'admin' })).status).toBe(200);
    const removals = await Promise.all([boss.delete('/api/v1/orgs/1/members/member'), t.member.delete('/api/v1/orgs/1/members/boss')]);
    expect(removals.filter((r) => r.status === 204)).toHaveLength(1);
    expect((await t.storage.db.selectFrom('memberships').select('role').where('org_id', '=', 1).where('role', '=', 'admin').execute()).length).toBe(1);
  });
});
