import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/helpers/harness.js';
import { useJobsScene } from '../../../test/helpers/jobs-app.js';
import { sessionAt as bodyAt } from '../sessions/sessions.test-helpers.js';

/*
 * Contract section 10, reminders on webhooks: one `session.starting` per occurrence, person
 * involved and offset, with `minutes_before`: the session's own `reminders`, or when null
 * each person's home ones. Checked through the clock's catch-up (instants missed while every
 * instance was down fire late with their own timestamps), so nothing waits on the wall clock.
 */

const minute = 60_000;

/** A public session body starting at `at` (UTC, whole minutes). */
const sessionAt = (at: Date, extra: Record<string, unknown> = {}) => bodyAt(at, { name: 'Reminded', duration: 30, is_public: true, ...extra });

describeEachDialect('webhooks: reminders', (dialect) => {
  const scene = useJobsScene(dialect);

  it('raises session.starting per reminder: the session’s own offsets for everyone involved, else each person’s own', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    const bob = await t.user('bob');
    const carol = await t.user('carol');
    for (const [user, name] of [[alice, 'alice'], [bob, 'bob'], [carol, 'carol']] as const) {
      expect((await user.post('/api/v1/webhooks', { url: `${receiver.base}/${name}`, events: ['session.starting'] })).status).toBe(201);
    }
    expect((await alice.put('/api/v1/me', { timezone: 'UTC', reminders: [5, 30] })).status).toBe(200);
    expect((await bob.put('/api/v1/me', { timezone: 'UTC', reminders: [15] })).status).toBe(200);
    const base = Math.floor(Date.now() / minute) * minute;
    // Each person's own: alice 30 and 5, bob (joined) 15; carol (not involved) nothing.
    const home = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 60 * minute)))).body.data;
    // The session's own, for host and participant alike.
    const own = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 100 * minute), { reminders: [0, 45] }))).body.data;
    // None at all.
    const none = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 50 * minute), { reminders: [] }))).body.data;
    for (const s of [home, own, none]) expect((await bob.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(200);
    // Many offsets in use across the instance (other people's), none adjacent: many ranges to ask for, in bounded statements.
    const others = Array.from({ length: 1_100 }, (_, i) => ({ handle: `other${i}`, created_at: new Date().toISOString(), reminders: JSON.stringify([7 + 2 * i]) }));
    await t.storage.db.insertInto('users').values(others as never).execute();
    await t.storage.db.updateTable('webhook_state').set({ instant: new Date(base - 150 * minute).toISOString() }).where('name', '=', 'clock').execute();

    await t.start();
    await receiver.until((r) => r.length >= 7, 15_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const got = receiver.received.map((r) => {
      const p = JSON.parse(r.body) as { type: string; timestamp: string; data: { id: number; minutes_before: number; starts_at: string } };
      expect(p.type).toBe('session.starting');
      expect(Date.parse(p.data.starts_at) - Date.parse(p.timestamp)).toBe(p.data.minutes_before * minute);
      return `${r.path} ${p.data.id} ${p.data.minutes_before}`;
    });
    expect(got.sort()).toEqual(
      [`/alice ${home.id} 30`, `/alice ${home.id} 5`, `/bob ${home.id} 15`, `/alice ${own.id} 45`, `/alice ${own.id} 0`, `/bob ${own.id} 45`, `/bob ${own.id} 0`].sort(),
    );
  }, 60_000);
});
