import { expect, it } from 'vitest';
import { describeEachDialect, useUnmigratedStorage } from '../../test/helpers/harness.js';
import { MIGRATION_TEST_NOW as now, migratedWithUsers } from '../../test/helpers/migration-start.js';
import { sessionRow } from '../../test/helpers/session-row.js';

/*
 * 0033_session_read_flags on a database that already has overrides and participation: the
 * sessions that have them are flagged, and the triggers flag the rest as rows arrive or move.
 */
describeEachDialect('migration 0033 (session read flags)', (dialect) => {
  const opened = useUnmigratedStorage(dialect);

  it('flags the sessions existing rows name, then follows inserts and moves', async () => {
    const { storage } = opened;
    const [ann] = (await migratedWithUsers(storage, '0032_public_filtered_keys', ['ann'])) as [number];
    const { db } = storage;
    const ids: number[] = [];
    // One after the other: the flags are listed by id below.
    for (const name of ['Edited', 'Joined', 'Plain', 'Later']) {
      ids.push((await db.insertInto('sessions').values(sessionRow(name, ann, { is_recurring: 1 })).returning('id').executeTakeFirstOrThrow()).id);
    }
    const [edited, joined, plain, later] = ids as [number, number, number, number];
    const override = (sessionId: number, date: string) => ({ session_id: sessionId, occurrence_date: date, fields: '{}', updated_at: now });
    const participation = (sessionId: number, date: string) => ({ session_id: sessionId, user_id: ann, occurrence_date: date, joined_at: now, completed_at: null });
    await db.insertInto('session_overrides').values(override(edited, '2026-01-02')).execute();
    await db.insertInto('session_participants').values(participation(joined, '2026-01-02')).execute();

    expect(await storage.migrate()).toContain('0033_session_read_flags');
    const flags = async () => {
      const rows = await db.selectFrom('sessions').select(['id', 'has_overrides', 'has_participants']).orderBy('id').execute();
      return rows.map((r) => [r.id, r.has_overrides, r.has_participants]);
    };
    expect(await flags()).toEqual([
      [edited, 1, 0],
      [joined, 0, 1],
      [plain, 0, 0],
      [later, 0, 0],
    ]);
    // New rows flag their session; rows moved to another session (a split) flag that one; nothing clears a flag.
    await db.insertInto('session_participants').values(participation(plain, '2026-01-03')).execute();
    await db.updateTable('session_overrides').set({ session_id: later }).where('session_id', '=', edited).execute();
    await db.updateTable('session_participants').set({ session_id: later }).where('session_id', '=', joined).execute();
    expect(await flags()).toEqual([
      [edited, 1, 0],
      [joined, 0, 1],
      [plain, 0, 1],
      [later, 1, 1],
    ]);
  });
});
