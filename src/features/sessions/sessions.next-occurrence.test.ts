import { expect, it } from 'vitest';
import { createSessionsContext } from './sessions.context.js';
import { loadItems } from './sessions.read-model.js';
import { createSessionsService } from './sessions.service.js';
import { toJson } from '../../storage/columns.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { sessionRow } from '../../../test/helpers/session-row.js';

/** 12:00 UTC on 1 July is already 2 July in Kiritimati (UTC+14); 05:00 UTC is still 30 June in Pago Pago (UTC−11). */
const NOON = '2026-07-01T12:00:00.000Z';
const EARLY = '2026-07-01T05:00:00.000Z';

/**
 * A series shown as a whole counts the participants of its next occurrence: the first one on
 * or after the series' own today, whichever side of UTC's date its zone is on.
 */
describeEachDialect("a series' next occurrence in every zone", (dialect) => {
  const fixture = useStorageFixture(dialect, '2026-05-01T00:00:00.000Z');

  it.each([
    ['Pacific/Kiritimati', NOON, '2026-07-02'],
    ['UTC', NOON, '2026-07-01'],
    ['Pacific/Pago_Pago', EARLY, '2026-06-30'],
  ])('%s at %s: the occurrence of its today, %s', async (timezone, at, today) => {
    const now = new Date(at);
    const { storage, user } = fixture;
    const ctx = createSessionsContext(storage);
    // Daily at 23:00 local, ending within the index's reach: fully indexed, never expanded per request.
    const series = await storage.db
      .insertInto('sessions')
      .values(
        sessionRow(`daily in ${timezone}`, user.id, {
          schedule: '2026-06-01', time_minutes: 23 * 60, timezone, starts_at: '2026-06-01T23:00:00.000Z', ends_at: '2026-06-01T23:25:00.000Z',
          is_recurring: 1, occurrence: 'daily', recurring_start: '2026-06-01', recurring_ends: '2026-08-01', recurring_days: toJson([]),
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    const service = createSessionsService(storage);
    while ((await service.indexStep(100, now)) > 0);
    const other = await storage.db.insertInto('users').values({ handle: `guest-${timezone.replace('/', '-')}`, created_at: at }).returning('id').executeTakeFirstOrThrow();
    await storage.db.insertInto('session_participants').values({ session_id: series.id, user_id: other.id, occurrence_date: today, joined_at: at, completed_at: null }).execute();

    const set = await loadItems(ctx, storage.db, { user: { ...user, orgIds: [1] }, items: [{ id: series.id }], now });
    expect(set.counted).toEqual([today]);
    expect(set.counts.get(`${series.id}|${today}`)).toBe(1);
  });
});
