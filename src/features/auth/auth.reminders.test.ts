import { expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { createSession, sessionBody } from '../sessions/sessions.test-helpers.js';

/*
 * Contract section 10, reminders: `/me` has `reminders` (0–5 distinct minute offsets,
 * 0–10,080, default [5]); a session may have its own (same shape, null = each person's own).
 */

const ME = '/api/v1/me';
const BAD: unknown[] = [[5, 5], [1, 2, 3, 4, 5, 6], [-1], [10_081], [1.5], ['5'], [null], 5, '5', { 0: 5 }];

describeEachDialect('reminders on /me and on sessions', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  it('/me starts with [5]; PUT sets them (none, up to five, the bounds), keeps them when left out', async () => {
    expect((await t.alice.get(ME)).body).toMatchObject({ data: { reminders: [5] } });
    for (const reminders of [[], [0, 10_080], [1, 2, 3, 4, 5], [60]]) {
      const res = await t.alice.put(ME, { timezone: 'UTC', reminders });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ data: { reminders } });
      expect((await t.alice.get(ME)).body).toMatchObject({ data: { reminders } });
    }
    // A PUT of the zone alone leaves the reminders as they are.
    expect((await t.alice.put(ME, { timezone: 'Europe/Berlin' })).body).toMatchObject({ data: { timezone: 'Europe/Berlin', reminders: [60] } });
    // Only the caller's own changed.
    expect((await t.bob.get(ME)).body).toMatchObject({ data: { reminders: [5] } });
  });

  it('/me refuses duplicates, more than five, out of range and non-integers with 422 on /reminders, changing nothing', async () => {
    expect((await t.bob.put(ME, { timezone: 'UTC', reminders: [15] })).status).toBe(200);
    for (const reminders of [...BAD, null]) {
      const res = await t.bob.put(ME, { timezone: 'UTC', reminders });
      expect(errorPaths(res).every((p) => p.startsWith('/reminders')), JSON.stringify(reminders)).toBe(true);
    }
    expect((await t.bob.get(ME)).body).toMatchObject({ data: { reminders: [15] } });
  });

  it('a session has null by default, takes its own on create and PUT, and null again', async () => {
    const plain = await createSession(t.alice);
    expect(plain).toMatchObject({ reminders: null });
    const own = await createSession(t.alice, { reminders: [0, 30] });
    expect(own).toMatchObject({ reminders: [0, 30] });
    expect((await t.alice.get(`/api/v1/sessions/${own.id}`)).body).toMatchObject({ data: { reminders: [0, 30] } });
    const put = await t.alice.put(`/api/v1/sessions/${plain.id}`, { reminders: [] });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ data: { reminders: [] } });
    expect((await t.alice.put(`/api/v1/sessions/${own.id}`, { reminders: null })).body).toMatchObject({ data: { reminders: null } });
    // Shown in listings too.
    const listed = await t.alice.get<{ data: { id: number; reminders: unknown }[] }>('/api/v1/sessions');
    expect(listed.body.data.find((s) => s.id === plain.id)?.reminders).toEqual([]);
  });

  it('a session refuses the same bad reminders with 422 on /reminders, on create and on PUT', async () => {
    const s = await createSession(t.alice, { reminders: [10] });
    for (const reminders of BAD) {
      expect(errorPaths(await t.alice.post('/api/v1/sessions', sessionBody({ reminders }))), JSON.stringify(reminders)).toSatisfy((paths: string[]) =>
        paths.length > 0 && paths.every((p) => p.startsWith('/reminders')),
      );
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { reminders })), JSON.stringify(reminders)).toSatisfy((paths: string[]) =>
        paths.length > 0 && paths.every((p) => p.startsWith('/reminders')),
      );
    }
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body).toMatchObject({ data: { reminders: [10] } });
  });
});
