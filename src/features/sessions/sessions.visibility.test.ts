import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Client, type TestApp, createTestApp, describeEachDialect } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAll } from './sessions.test-helpers.js';

describeEachDialect('session visibility over HTTP', (dialect) => {
  let t: TestApp;
  let alice: Client;
  let bob: Client;
  let carol: Client;
  let dave: Client;
  let priv: SessionRecord;
  let pub: SessionRecord;
  let shared: SessionRecord;
  let series: SessionRecord;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user('alice', [1]);
    bob = await t.user('bob', [1]);
    carol = await t.user('carol', [2]);
    dave = await t.user('dave', [1]);
    priv = await createSession(alice, { name: 'private' });
    pub = await createSession(alice, { name: 'public', is_public: true });
    shared = await createSession(alice, { name: 'shared', collaborator: ['bob'] });
    series = await createSession(alice, { name: 'private-series', is_recurring: 1, occurrence: 'daily', collaborator: ['dave'] });
  });
  afterAll(() => t.close());

  const visibleNames = async (c: Client, query = '') => (await listAll(c, query, 500)).map((s) => s.name).sort();

  it('hides a private session from same-org users who are not involved: 404 everywhere, absent from lists', async () => {
    expect((await bob.get(`/api/v1/sessions/${priv.id}`)).status).toBe(404);
    expect((await bob.put(`/api/v1/sessions/${priv.id}`, { name: 'x' })).status).toBe(404);
    expect((await bob.delete(`/api/v1/sessions/${priv.id}`)).status).toBe(404);
    expect((await bob.get(`/api/v1/sessions/${priv.id}/occurrences?from=2026-03-01&to=2026-03-31`)).status).toBe(404);
    expect(await visibleNames(bob)).toEqual(['public', 'shared']);
    expect(await visibleNames(bob, 'date=2026-03-10')).toEqual(['public', 'shared']);
    expect(await visibleNames(bob, 'source=user')).toEqual(['shared']);
    expect(await visibleNames(bob, 'channel=private')).toEqual(['shared']);
  });

  it('shows private sessions to their collaborators (read only)', async () => {
    expect((await bob.get(`/api/v1/sessions/${shared.id}`)).status).toBe(200);
    expect((await bob.put(`/api/v1/sessions/${shared.id}`, { name: 'x' })).status).toBe(403);
    expect((await bob.delete(`/api/v1/sessions/${shared.id}`)).status).toBe(403);
    expect((await dave.get(`/api/v1/sessions/${series.id}?date=2026-03-12`)).status).toBe(200);
    expect(await visibleNames(dave, 'day_start=2026-03-10&day_ends=2026-03-11')).toEqual(['private-series', 'private-series', 'public']);
  });

  it('shows the org its public sessions; other orgs never see anything', async () => {
    expect((await dave.get(`/api/v1/sessions/${pub.id}`)).status).toBe(200);
    for (const s of [priv, pub, shared, series]) {
      expect((await carol.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await carol.put(`/api/v1/sessions/${s.id}`, { name: 'x' })).status).toBe(404);
      expect((await carol.delete(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await carol.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(404);
    }
    expect(await visibleNames(carol)).toEqual([]);
    expect(await visibleNames(carol, 'day_start=2026-03-01&day_ends=2026-03-31')).toEqual([]);
    expect(await visibleNames(alice)).toEqual(['private', 'private-series', 'public', 'shared']);
  });

  it('does not leak through the 404 body', async () => {
    const res = await bob.get(`/api/v1/sessions/${priv.id}`);
    expect(res.text).not.toContain('private');
    expect(res.text).not.toContain('alice');
  });
});
