import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { toJson } from '../../storage/columns.js';
import { type UserClient, describeEachDialect } from '../../../test/helpers/harness.js';
import { type JobsApp, createJobsApp } from '../../../test/helpers/jobs-app.js';
import { Receiver } from '../../../test/helpers/webhook-receiver.js';

/*
 * Contract section 9, `session.participation`: each delivery says what was done (join,
 * leave, complete), to which occurrence, and carries the session as the webhook's user
 * sees that occurrence. Who did it is told to the session's creator and collaborators and
 * to the actor, never to other members (no endpoint lists who joined).
 */

type Participation = {
  action: string | null;
  occurrence_date: string | null;
  user: string | null;
  session: { id: number; occurrence_date?: string; starts_at?: string; participants_count?: number; participation?: { joined: boolean } };
};

const SERIES = { org_id: 1, name: 'Daily standup', type: 'standard', duration: 30, schedule: '2026-03-01', time: '9:00 AM', timezone: 'Europe/Berlin', is_public: true, is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-10' };
const ONE_OFF = { org_id: 1, name: 'Deep work', type: 'standard', duration: 60, schedule: '2026-03-05', time: '2:00 PM', is_public: true };

describeEachDialect('webhooks: session.participation', (dialect) => {
  let t: JobsApp;
  let users: Record<'alice' | 'bob' | 'carol' | 'dave', UserClient>;
  let hooks: Record<string, { id: string; secret: string }>;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await createJobsApp(dialect);
    await t.start();
    users = { alice: await t.user('alice'), bob: await t.user('bob'), carol: await t.user('carol'), dave: await t.user('dave') };
    receiver = await new Receiver().start();
    hooks = {};
    for (const [handle, client] of Object.entries(users)) {
      const res = await client.post('/api/v1/webhooks', { url: `${receiver.url}?${handle}`, events: ['session.participation'] });
      expect(res.status, res.text).toBe(201);
      hooks[handle] = res.body.data;
    }
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
  });

  /** Does `action`, waits for one delivery per webhook, and returns them by recipient: the one secret that verifies each. */
  async function deliveriesOf(action: () => Promise<{ status: number; text?: string }>): Promise<Record<string, { type: string; data: Participation }>> {
    receiver.received.length = 0;
    const res = await action();
    expect(res.status, res.text).toBe(200);
    await receiver.until((r) => r.length >= 4);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(4);
    const out: Record<string, { type: string; data: Participation }> = {};
    for (const r of receiver.received) {
      const verifying = Object.entries(hooks).filter(([, hook]) => {
        try {
          new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      expect(verifying).toHaveLength(1);
      const [handle] = verifying[0] as [string, unknown];
      out[handle] = JSON.parse(r.body) as { type: string; data: Participation };
    }
    expect(Object.keys(out).sort()).toEqual(['alice', 'bob', 'carol', 'dave']);
    for (const got of Object.values(out)) expect(got.type).toBe('session.participation');
    return out;
  }

  const userSeen = (got: Record<string, { data: Participation }>) => Object.fromEntries(Object.entries(got).map(([handle, d]) => [handle, d.data.user]));
  const BOB_TOLD = { alice: 'bob', bob: 'bob', carol: null, dave: 'bob' };

  it('tells join, complete and leave of a series occurrence, with that occurrence, and bob only to host, collaborator and himself', async () => {
    const series = (await users.alice.post('/api/v1/sessions', { ...SERIES, collaborator: ['dave'] })).body.data;
    const [, second, third] = (await users.alice.get(`/api/v1/sessions/${series.id}/occurrences?from=2026-03-01&to=2026-03-03`)).body.data as { occurrence_date: string; starts_at: string }[];

    const joined = await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${series.id}/join?date=2026-03-02`));
    expect(userSeen(joined)).toEqual(BOB_TOLD);
    for (const [handle, got] of Object.entries(joined)) {
      expect(got.data).toMatchObject({ action: 'join', occurrence_date: '2026-03-02' });
      // The session as this user sees that day: its instants and count, and the user's own participation.
      expect(got.data.session).toMatchObject({ id: series.id, occurrence_date: '2026-03-02', starts_at: second?.starts_at, participants_count: 2 });
      expect(got.data.session.participation?.joined).toBe(handle === 'bob' || handle === 'alice');
    }

    const completed = await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${series.id}/complete?date=2026-03-02`));
    expect(userSeen(completed)).toEqual(BOB_TOLD);
    for (const got of Object.values(completed)) {
      expect(got.data).toMatchObject({ action: 'complete', occurrence_date: '2026-03-02', session: { id: series.id, occurrence_date: '2026-03-02', starts_at: second?.starts_at } });
    }

    await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${series.id}/join?date=2026-03-03`));
    const left = await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${series.id}/leave?date=2026-03-03`));
    expect(userSeen(left)).toEqual(BOB_TOLD);
    for (const got of Object.values(left)) {
      expect(got.data).toMatchObject({ action: 'leave', occurrence_date: '2026-03-03', session: { id: series.id, occurrence_date: '2026-03-03', starts_at: third?.starts_at, participants_count: 1 } });
    }

    // The host acting: every member who may know it is told.
    const hosted = await deliveriesOf(() => users.alice.post(`/api/v1/sessions/${series.id}/complete?date=2026-03-03`));
    expect(userSeen(hosted)).toEqual({ alice: 'alice', bob: null, carol: null, dave: 'alice' });
    expect(hosted.carol?.data).toMatchObject({ action: 'complete', occurrence_date: '2026-03-03', session: { occurrence_date: '2026-03-03', status: 'completed' } });
  });

  it('tells join, leave and complete of a one-off session with no occurrence date, and the session as GET shows it', async () => {
    const session = (await users.alice.post('/api/v1/sessions', ONE_OFF)).body.data;
    const expectOneOff = (got: Record<string, { data: Participation }>, action: string, count: number) => {
      expect(userSeen(got)).toEqual({ alice: 'bob', bob: 'bob', carol: null, dave: null });
      for (const d of Object.values(got)) {
        expect(d.data).toMatchObject({ action, occurrence_date: null, session: { id: session.id, starts_at: session.starts_at, participants_count: count } });
        expect(d.data.session).not.toHaveProperty('occurrence_date');
      }
    };
    expectOneOff(await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${session.id}/join`)), 'join', 2);
    expectOneOff(await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${session.id}/leave`)), 'leave', 1);
    await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${session.id}/join`));
    expectOneOff(await deliveriesOf(() => users.bob.post(`/api/v1/sessions/${session.id}/complete`)), 'complete', 2);
  });

  it('sends a participation logged without its details (by a server before migration 0013) with action and occurrence_date null', async () => {
    const session = (await users.alice.post('/api/v1/sessions', { ...ONE_OFF, name: 'Logged before' })).body.data;
    const ids = Object.fromEntries((await t.storage.db.selectFrom('users').select(['id', 'handle']).execute()).map((u) => [u.handle, u.id]));
    // The row such a server writes: no participation, no occurrence_date.
    const got = await deliveriesOf(async () => {
      await t.storage.db
        .insertInto('changes')
        .values({
          kind: 'session',
          action: 'participation',
          record_id: session.id,
          org_id: 1,
          owner_id: ids.alice as number,
          audience: toJson({ public: true, users: [] }),
          actor_id: ids.bob as number,
          changed_at: new Date().toISOString(),
        })
        .execute();
      return { status: 200 };
    });
    expect(userSeen(got)).toEqual({ alice: 'bob', bob: 'bob', carol: null, dave: null });
    for (const d of Object.values(got)) expect(d.data).toMatchObject({ action: null, occurrence_date: null, session: { id: session.id, name: 'Logged before' } });
  });
});
