import { beforeAll, expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAllSessions } from './sessions.test-helpers.js';

describeEachDialect('session visibility over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dave: [1] });
  let priv: SessionRecord;
  let pub: SessionRecord;
  let shared: SessionRecord;
  let series: SessionRecord;

  beforeAll(async () => {
    priv = await createSession(t.alice, { name: 'private' });
    pub = await createSession(t.alice, { name: 'public', is_public: true });
    shared = await createSession(t.alice, { name: 'shared', collaborator: ['bob'] });
    series = await createSession(t.alice, { name: 'private-series', is_recurring: 1, occurrence: 'daily', collaborator: ['dave'] });
  });

  const visibleNames = async (c: Client, query = '') => (await listAllSessions(c, query, 500)).map((s) => s.name).sort();

  it('hides a private session from same-org users who are not involved: 404 everywhere, absent from lists', async () => {
    expect((await t.bob.get(`/api/v1/sessions/${priv.id}`)).status).toBe(404);
    expect((await t.bob.put(`/api/v1/sessions/${priv.id}`, { name: 'x' })).status).toBe(404);
    expect((await t.bob.delete(`/api/v1/sessions/${priv.id}`)).status).toBe(404);
    expect((await t.bob.get(`/api/v1/sessions/${priv.id}/occurrences?from=2026-03-01&to=2026-03-31`)).status).toBe(404);
    expect(await visibleNames(t.bob)).toEqual(['public', 'shared']);
    expect(await visibleNames(t.bob, 'date=2026-03-10')).toEqual(['public', 'shared']);
    expect(await visibleNames(t.bob, 'source=user')).toEqual(['shared']);
    expect(await visibleNames(t.bob, 'channel=private')).toEqual(['shared']);
  });

  it('shows private sessions to their collaborators (read only)', async () => {
    expect((await t.bob.get(`/api/v1/sessions/${shared.id}`)).status).toBe(200);
    expect((await t.bob.put(`/api/v1/sessions/${shared.id}`, { name: 'x' })).status).toBe(403);
    expect((await t.bob.delete(`/api/v1/sessions/${shared.id}`)).status).toBe(403);
    expect((await t.dave.get(`/api/v1/sessions/${series.id}?date=2026-03-12`)).status).toBe(200);
    expect(await visibleNames(t.dave, 'day_start=2026-03-10&day_ends=2026-03-11')).toEqual(['private-series', 'private-series', 'public']);
  });

  it('shows the org its public sessions; other orgs never see anything', async () => {
    expect((await t.dave.get(`/api/v1/sessions/${pub.id}`)).status).toBe(200);
    for (const s of [priv, pub, shared, series]) {
      expect((await t.carol.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await t.carol.put(`/api/v1/sessions/${s.id}`, { name: 'x' })).status).toBe(404);
      expect((await t.carol.delete(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await t.carol.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(404);
    }
    expect(await visibleNames(t.carol)).toEqual([]);
    expect(await visibleNames(t.carol, 'day_start=2026-03-01&day_ends=2026-03-31')).toEqual([]);
    expect(await visibleNames(t.alice)).toEqual(['private', 'private-series', 'public', 'shared']);
  });

  it('does not leak through the 404 body', async () => {
    const res = await t.bob.get(`/api/v1/sessions/${priv.id}`);
    expect(res.text).not.toContain('private');
    expect(res.text).not.toContain('alice');
  });
});
