import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../helpers/harness.js';
import { type CliResult, buildOnce, focusBin } from '../helpers/server-process.js';

/*
 * Contract section 13, off-boarding, as an operator types it: `users disable|enable|remove`,
 * `webhooks list|delete`, `feeds list|delete`, each with its JSON result on stdout and the
 * API (same database) showing the effect at once. What reaches streams, webhooks and feeds
 * of a running server is test/multi-instance/offboarding.test.ts.
 */

beforeAll(buildOnce, 180_000);

function json(result: CliResult): unknown {
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}

function oneLineFailure(result: CliResult, mentions: RegExp): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr.trim()).toMatch(mentions);
}

const SESSION = { name: 'Board prep', type: 'standard', duration: 30, schedule: '2026-12-10', time: '9:00 AM', is_public: false };

describeEachDialect('npx focus: off-boarding commands', (dialect) => {
  const database = useTestDatabase(dialect);
  let env: Record<string, string>;
  let app: FastifyInstance;
  const tokens: Record<string, string> = {};

  const call = async (who: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) => {
    const res = await app.inject({ method, url, payload, headers: { authorization: `Bearer ${tokens[who] ?? ''}` } });
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json<{ data: Record<string, unknown> }>() };
  };

  beforeAll(async () => {
    env = { DATABASE_URL: database.url };
    json(await focusBin(env, 'users', 'add', 'olga', '--org', '1', '--org', '2'));
    json(await focusBin(env, 'users', 'add', 'pete', '--org', '1'));
    for (const who of ['olga', 'pete']) tokens[who] = (json(await focusBin(env, 'tokens', 'issue', who)) as { token: string }).token;
    app = await buildApp({ config: testConfig(database.url, { WEBHOOK_ALLOW_PRIVATE: '1' }), logger: false, migrate: false });
    await app.ready();
  }, 90_000);

  afterAll(async () => {
    await app?.close();
  });

  it('users disable refuses every token of the user at once, users enable undoes it; both show in users list', async () => {
    expect((await call('olga', 'GET', '/api/v1/me')).status).toBe(200);
    const disabled = await focusBin(env, 'users', 'disable', 'olga');
    expect(disabled.stdout).toBe('{"handle":"olga","disabled":true}\n');
    expect((await call('olga', 'GET', '/api/v1/me')).status).toBe(401);
    expect((await call('pete', 'GET', '/api/v1/me')).status).toBe(200);
    // Disabling twice is fine; the list says so.
    expect(json(await focusBin(env, 'users', 'disable', 'olga'))).toEqual({ handle: 'olga', disabled: true });
    const listed = json(await focusBin(env, 'users', 'list')) as { data: { handle: string; disabled: boolean }[] };
    expect(listed.data.map((u) => [u.handle, u.disabled])).toEqual([['olga', true], ['pete', false]]);

    expect(json(await focusBin(env, 'users', 'enable', 'olga'))).toEqual({ handle: 'olga', disabled: false });
    expect((await call('olga', 'GET', '/api/v1/me')).status).toBe(200);

    oneLineFailure(await focusBin(env, 'users', 'disable', 'nobody'), /^focus: no user with handle nobody \(focus users disable --help\)$/);
    oneLineFailure(await focusBin(env, 'users', 'enable'), /^focus: "users enable" needs <handle> \(focus users enable --help\)$/);
  }, 90_000);

  it("users remove --org ends one membership: the token no longer sees that org's private sessions, the other org's it still does", async () => {
    const inOne = await call('olga', 'POST', '/api/v1/sessions', { ...SESSION, org_id: 1 });
    const inTwo = await call('olga', 'POST', '/api/v1/sessions', { ...SESSION, org_id: 2 });
    expect([inOne.status, inTwo.status]).toEqual([201, 201]);
    const removed = await focusBin(env, 'users', 'remove', 'olga', '--org', '1');
    expect(removed.stdout).toBe('{"handle":"olga","org_ids":[2]}\n');
    expect((await call('olga', 'GET', '/api/v1/me')).body?.data.org_ids).toEqual([2]);
    expect((await call('olga', 'GET', `/api/v1/sessions/${String(inOne.body?.data.id)}`)).status).toBe(404);
    expect((await call('olga', 'GET', `/api/v1/sessions/${String(inTwo.body?.data.id)}`)).status).toBe(200);

    oneLineFailure(await focusBin(env, 'users', 'remove', 'olga', '--org', '1'), /^focus: olga is not a member of org 1 \(focus users remove --help\)$/);
    oneLineFailure(await focusBin(env, 'users', 'remove', 'olga'), /^focus: "users remove" needs --org <id> \(focus users remove --help\)$/);
    oneLineFailure(await focusBin(env, 'users', 'remove', 'olga', '--org', 'x'), /org id .*: x \(focus users remove --help\)$/);
  }, 90_000);

  it("webhooks list shows every user's webhooks (or one user's) without secrets; webhooks delete removes any of them", async () => {
    const url = 'http://127.0.0.1:9/hook';
    const mine = await call('olga', 'POST', '/api/v1/webhooks', { url, events: ['session.created'] });
    const theirs = await call('pete', 'POST', '/api/v1/webhooks', { url, events: ['task.created'], description: 'sync' });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const listed = await focusBin(env, 'webhooks', 'list');
    expect(listed.stdout).not.toContain('whsec_');
    expect(json(listed)).toEqual({
      data: [
        { id: mine.body?.data.id, handle: 'olga', url, events: ['session.created'], description: null, active: true, created_at: mine.body?.data.created_at },
        { id: theirs.body?.data.id, handle: 'pete', url, events: ['task.created'], description: 'sync', active: true, created_at: theirs.body?.data.created_at },
      ],
    });
    const petes = json(await focusBin(env, 'webhooks', 'list', '--user', 'pete')) as { data: { id: string }[] };
    expect(petes.data.map((w) => w.id)).toEqual([theirs.body?.data.id]);

    const id = String(theirs.body?.data.id);
    expect(json(await focusBin(env, 'webhooks', 'delete', id))).toEqual({ id, deleted: true });
    expect((await call('pete', 'GET', `/api/v1/webhooks/${id}`)).status).toBe(404);
    expect((await call('olga', 'GET', `/api/v1/webhooks/${String(mine.body?.data.id)}`)).status).toBe(200);
    oneLineFailure(await focusBin(env, 'webhooks', 'delete', id), new RegExp(`^focus: no webhook with id ${id} \\(focus webhooks delete --help\\)$`));
    oneLineFailure(await focusBin(env, 'webhooks', 'list', '--user', 'nobody'), /^focus: no user with handle nobody \(focus webhooks list --help\)$/);
  }, 90_000);

  it("feeds list shows every user's calendar feeds (or one user's) without secrets; feeds delete makes the URL 404", async () => {
    const mine = await call('olga', 'POST', '/api/v1/calendar-feeds', { name: 'Work' });
    const theirs = await call('pete', 'POST', '/api/v1/calendar-feeds', {});
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const secretUrl = String(mine.body?.data.url);
    expect((await app.inject({ url: secretUrl })).statusCode).toBe(200);

    const listed = await focusBin(env, 'feeds', 'list');
    expect(listed.stdout).not.toContain(secretUrl.slice('/ical/'.length, -'.ics'.length));
    expect(json(listed)).toEqual({
      data: [
        { id: mine.body?.data.id, handle: 'olga', name: 'Work', created_at: mine.body?.data.created_at },
        { id: theirs.body?.data.id, handle: 'pete', name: 'Focus sessions', created_at: theirs.body?.data.created_at },
      ],
    });
    expect((json(await focusBin(env, 'feeds', 'list', '--user', 'olga')) as { data: { id: number }[] }).data.map((f) => f.id)).toEqual([mine.body?.data.id]);

    const id = Number(mine.body?.data.id);
    expect(json(await focusBin(env, 'feeds', 'delete', String(id)))).toEqual({ id, deleted: true });
    expect((await app.inject({ url: secretUrl })).statusCode).toBe(404);
    oneLineFailure(await focusBin(env, 'feeds', 'delete', String(id)), new RegExp(`^focus: no calendar feed with id ${id} \\(focus feeds delete --help\\)$`));
    oneLineFailure(await focusBin(env, 'feeds', 'delete', 'x'), /feed id .*: x \(focus feeds delete --help\)$/);
  }, 90_000);

  it('a disabled user’s calendar feed answers 404, as a revoked one does, until the user is enabled again', async () => {
    const feed = await call('pete', 'POST', '/api/v1/calendar-feeds', { name: 'Again' });
    const url = String(feed.body?.data.url);
    expect((await app.inject({ url })).statusCode).toBe(200);
    json(await focusBin(env, 'users', 'disable', 'pete'));
    expect((await app.inject({ url })).statusCode).toBe(404);
    json(await focusBin(env, 'users', 'enable', 'pete'));
    expect((await app.inject({ url })).statusCode).toBe(200);
  }, 90_000);
});
