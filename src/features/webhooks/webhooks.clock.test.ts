import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/helpers/harness.js';
import { useJobsScene } from '../../../test/helpers/jobs-app.js';
import { sessionAt as bodyAt } from '../sessions/sessions.test-helpers.js';

/*
 * Contract section 9, on the clock: `session.starting|started|ended` per occurrence, from
 * the occurrence index. While an instance runs, within 5 s of the instant (the real-time
 * case waits for the next minute: up to ~70 s); after every instance was down, late with
 * the original timestamp, at most 24 h back.
 */

/** A session body starting at `at` (UTC, whole minutes), lasting `duration` minutes. */
const sessionAt = (at: Date, duration: number) => bodyAt(at, { name: 'On the clock', duration });

describeEachDialect('webhooks: time-triggered events', (dialect) => {
  const scene = useJobsScene(dialect);

  it('raises what was missed while every instance was down, late, with the original timestamps (24 h at most)', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    const bob = await t.user('bob');
    const hook = (await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.starting', 'session.started', 'session.ended'] })).body.data;
    const minute = 60_000;
    const base = Math.floor(Date.now() / minute) * minute;
    // Started 2 h ago, ended 1 h ago: all three instants fall after the last check (3 h ago).
    const missed = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 120 * minute), 60))).body.data;
    // Two days ago: beyond the 24 h catch-up.
    await alice.post('/api/v1/sessions', sessionAt(new Date(base - 48 * 60 * minute), 30));
    // Bob's private session: not alice's to hear of.
    await bob.post('/api/v1/sessions', sessionAt(new Date(base - 90 * minute), 30));
    // The instances last checked the clock 3 h ago.
    await t.storage.db.updateTable('webhook_state').set({ instant: new Date(base - 180 * minute).toISOString() }).where('name', '=', 'clock').execute();

    await t.start();
    await receiver.until((r) => r.length >= 3, 15_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const got = receiver.received.map((r) => new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>) as { type: string; timestamp: string; data: { id: number; starts_at: string } });
    got.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(got.map((p) => [p.type, p.timestamp, p.data.id])).toEqual([
      ['session.starting', new Date(base - 125 * minute).toISOString(), missed.id],
      ['session.started', new Date(base - 120 * minute).toISOString(), missed.id],
      ['session.ended', new Date(base - 60 * minute).toISOString(), missed.id],
    ]);
    expect(got[0]?.data.starts_at).toBe(new Date(base - 120 * minute).toISOString());
  }, 60_000);

  it('follows the schedule: a session completed early still starts and ends, and says it is completed', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    const hook = (await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.started', 'session.ended'] })).body.data;
    const minute = 60_000;
    const base = Math.floor(Date.now() / minute) * minute;
    const early = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 120 * minute), 60))).body.data;
    const done = await alice.post(`/api/v1/sessions/${early.id}/complete`);
    expect(done.status, done.text).toBe(200);
    // A deleted session has no instants left to raise.
    const gone = (await alice.post('/api/v1/sessions', sessionAt(new Date(base - 90 * minute), 30))).body.data;
    expect((await alice.delete(`/api/v1/sessions/${gone.id}`)).status).toBe(204);
    await t.storage.db.updateTable('webhook_state').set({ instant: new Date(base - 180 * minute).toISOString() }).where('name', '=', 'clock').execute();

    await t.start();
    await receiver.until((r) => r.length >= 2, 15_000);
    await new Promise((r) => setTimeout(r, 1_500));
    const got = receiver.received.map((r) => new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: { id: number; status: string } });
    expect(got.map((p) => [p.type, p.data.id, p.data.status]).sort()).toEqual([
      ['session.ended', early.id, 'completed'],
      ['session.started', early.id, 'completed'],
    ]);
  }, 60_000);

  it('raises session.started within 5 s of a session starting at the next minute (waits up to ~70 s)', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    await t.start();
    await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.started'] });
    const minute = 60_000;
    // At least 5 s ahead, so that the session exists before its instant.
    const startsAt = Math.ceil((Date.now() + 5_000) / minute) * minute;
    const session = (await alice.post('/api/v1/sessions', sessionAt(new Date(startsAt), 5))).body.data;
    await receiver.until((r) => r.length >= 1, startsAt - Date.now() + 10_000, 'session.started');
    const [first] = receiver.received;
    const payload = JSON.parse(first!.body) as { type: string; timestamp: string; data: { id: number } };
    expect(payload).toMatchObject({ type: 'session.started', timestamp: new Date(startsAt).toISOString(), data: { id: session.id } });
    const lateBy = first!.at - startsAt;
    expect(lateBy).toBeGreaterThanOrEqual(0);
    expect(lateBy).toBeLessThan(5_000);
  }, 90_000);

  it('idles, reading and writing nothing, while no webhook listens for time events; the first to listen hears only what follows', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    const hook = (await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.created'] })).body.data;
    const minute = 60_000;
    const base = Math.floor(Date.now() / minute) * minute;
    expect((await alice.post('/api/v1/sessions', sessionAt(new Date(base - 120 * minute), 60))).status).toBe(201);
    const stale = new Date(base - 180 * minute).toISOString();
    await t.storage.db.updateTable('webhook_state').set({ instant: stale }).where('name', '=', 'clock').execute();
    const clock = async () => (await t.storage.db.selectFrom('webhook_state').select('instant').where('name', '=', 'clock').executeTakeFirstOrThrow()).instant;

    await t.start();
    // The clock steps every second: three seconds without a listener leave its row as it was.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await clock()).toBe(stale);

    const listening = new Date().toISOString();
    const patched = await alice.patch(`/api/v1/webhooks/${hook.id}`, { events: ['session.created', 'session.started', 'session.ended'] });
    expect(patched.status, patched.text).toBe(200);
    const at = async () => Date.parse((await clock()) ?? '');
    expect(await at()).toBeGreaterThanOrEqual(Date.parse(listening));
    // The session's start and end (2 h and 1 h ago) came before the webhook listened: never raised.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await at()).toBeGreaterThan(Date.parse(listening) + 1_000);
    const timed = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { id: number } }).filter((p) => p.type !== 'session.created');
    expect(timed.map((p) => [p.type, p.data.id])).toEqual([]);
  }, 60_000);
});
