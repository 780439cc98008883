import { expect, it } from 'vitest';
import { Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

describeEachDialect('OAuth 2.0 device authorization grant (RFC 8628, contract section 12)', (dialect) => {
  const t = useTestApp(dialect, { dee: [1] }, { PUBLIC_URL: 'https://focus.example' });
  const form = async (url: string, fields: Record<string, string>) => {
    const res = await t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
    return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, any>, headers: res.headers };
  };
  const start = (scope = 'sessions:read me:read') => form('/oauth/device_authorization', { client_id: 'Desk Blocker', scope });
  const poll = (deviceCode: string) => form('/oauth/token', { grant_type: GRANT, device_code: deviceCode });
  const oldPoll = (deviceCode: string) =>
    t.storage.db.updateTable('device_codes').set({ polled_at: '2000-01-01T00:00:00.000Z' }).where('status', 'in', ['pending', 'approved', 'denied']).execute().then(() => poll(deviceCode));

  it('answers the codes: 8-character user code without look-alikes, /device URIs, 600 s, interval 5', async () => {
    const res = await start();
    expect(res.status).toBe(200);
    expect(res.body.user_code).toMatch(/^[CDFGHJKMNPQRTVWX3479]{4}-[CDFGHJKMNPQRTVWX3479]{4}$/);
    expect(res.body).toMatchObject({ verification_uri: 'https://focus.example/device', expires_in: 600, interval: 5 });
    expect(res.body.verification_uri_complete).toBe(`https://focus.example/device?user_code=${res.body.user_code}`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect((await start('root')).body.error).toBe('invalid_scope');
    expect((await form('/oauth/device_authorization', { scope: 'me:read' })).body.error).toBe('invalid_request');
  });

  it('pending, slow_down, then approved: one token with the scopes, listed and revocable as a connected app', async () => {
    const { device_code, user_code } = (await start()).body;
    expect((await poll(device_code)).body).toMatchObject({ error: 'authorization_pending' });
    const fast = await poll(device_code);
    expect(fast.status).toBe(400);
    expect(fast.body.error).toBe('slow_down');
    const shown = await t.dee.get(`/api/v1/device?user_code=${user_code.toLowerCase()}`);
    expect(shown.body.data).toMatchObject({ client_id: 'Desk Blocker', scopes: ['sessions:read', 'me:read'] });
    expect((await t.dee.post('/api/v1/device/approve', { user_code })).status).toBe(204);
    const granted = await oldPoll(device_code);
    expect(granted.status).toBe(200);
    expect(granted.body).toEqual({ access_token: expect.stringMatching(/^fst_/), token_type: 'Bearer', scope: 'sessions:read me:read' });
    expect((await oldPoll(device_code)).body.error).toBe('invalid_grant');
    const app = new Client(t.app, granted.body.access_token);
    expect((await app.get('/api/v1/sessions')).status).toBe(200);
    expect((await app.get('/api/v1/tasks')).status).toBe(403);
    const apps = await t.dee.get('/api/v1/me/apps');
    expect(apps.body.data).toEqual([expect.objectContaining({ client_id: 'Desk Blocker', scopes: ['sessions:read', 'me:read'] })]);
    expect((await t.dee.delete(`/api/v1/me/apps/${apps.body.data[0].id}`)).status).toBe(204);
    expect((await app.get('/api/v1/sessions')).status).toBe(401);
  });

  it('denied: access_denied; expired: expired_token; unknown: invalid_grant; other grants: unsupported_grant_type', async () => {
    const denied = (await start()).body;
    expect((await t.dee.post('/api/v1/device/deny', { user_code: denied.user_code })).status).toBe(204);
    expect((await oldPoll(denied.device_code)).body.error).toBe('access_denied');
    expect((await t.dee.post('/api/v1/device/approve', { user_code: denied.user_code })).status).toBe(404);
    const late = (await start()).body;
    await t.storage.db.updateTable('device_codes').set({ expires_at: '2001-01-01T00:00:00.000Z' }).where('user_code', '=', late.user_code.replace('-', '')).execute();
    expect((await poll(late.device_code)).body.error).toBe('expired_token');
    expect((await t.dee.post('/api/v1/device/approve', { user_code: late.user_code })).status).toBe(404);
    expect((await poll('nonsense')).body.error).toBe('invalid_grant');
    expect((await form('/oauth/token', { grant_type: 'password', device_code: 'x' })).body.error).toBe('unsupported_grant_type');
  });
});
