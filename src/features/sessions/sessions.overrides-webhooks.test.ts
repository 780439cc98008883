import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/helpers/harness.js';
import { useJobsScene } from '../../../test/helpers/jobs-app.js';
import { utcTime as hhmm } from './sessions.test-helpers.js';

/*
 * Contract section 10, "Where an override shows": an edited occurrence is told by
 * `session.updated` with that occurrence, and the clock raises its time-triggered events
 * at its new instant (read from the occurrence index, as every occurrence's).
 */

const MINUTE = 60_000;

describeEachDialect('webhooks of an edited occurrence', (dialect) => {
  const scene = useJobsScene(dialect);

  it('tells session.updated with the occurrence, and raises session.starting/started/ended at its new instants', async () => {
    const { t, receiver } = await scene();
    const alice = await t.user('alice');
    const hook = (await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['session.updated', 'session.starting', 'session.started', 'session.ended'] })).body.data;
    const base = Math.floor(Date.now() / MINUTE) * MINUTE;
    const start = new Date(base - 120 * MINUTE);
    const day = start.toISOString().slice(0, 10);
    // A daily series at a time 12 hours away: its own instants raise nothing in the window below.
    const later = new Date(base + 12 * 60 * MINUTE);
    const series = (
      await alice.post('/api/v1/sessions', {
        org_id: 1, name: 'daily', type: 'standard', duration: 60, schedule: day, recurring_start: new Date(base - 3 * 86_400_000).toISOString().slice(0, 10), time: hhmm(later), timezone: 'UTC',
        is_recurring: 1, occurrence: 'daily',
      })
    ).body.data;
    // Day `day`'s occurrence, moved to two hours ago for 40 minutes.
    const edited = await alice.put(`/api/v1/sessions/${series.id}?date=${day}`, { name: 'moved', time: hhmm(start), duration: 40 });
    expect(edited.status, edited.text).toBe(200);
    await t.storage.db.updateTable('webhook_state').set({ instant: new Date(base - 180 * MINUTE).toISOString() }).where('name', '=', 'clock').execute();

    await t.start();
    await receiver.until((r) => r.length >= 4, 20_000);
    await new Promise((r) => setTimeout(r, 1_500));
    type Payload = { type: string; timestamp: string; data: { id: number; name: string; occurrence_date?: string; starts_at: string } };
    const got = receiver.received.map((r) => new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>) as Payload).filter((p) => p.data.id === series.id);
    const updated = got.filter((p) => p.type === 'session.updated');
    expect(updated.map((p) => [p.data.name, p.data.occurrence_date, p.data.starts_at])).toEqual([['moved', day, start.toISOString()]]);
    const timed = got.filter((p) => p.type !== 'session.updated').sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(timed.map((p) => [p.type, p.timestamp, p.data.occurrence_date, p.data.name])).toEqual([
      ['session.starting', new Date(start.getTime() - 5 * MINUTE).toISOString(), day, 'moved'],
      ['session.started', start.toISOString(), day, 'moved'],
      ['session.ended', new Date(start.getTime() + 40 * MINUTE).toISOString(), day, 'moved'],
    ]);
  }, 60_000);
});
