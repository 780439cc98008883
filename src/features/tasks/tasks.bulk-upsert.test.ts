import { beforeAll, expect, it } from 'vitest';
import { type UpsertRow, createTasksRepository } from './tasks.repository.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';

/*
 * The bulk-import statement itself, below the HTTP layer: chunking under each engine's
 * bound-parameter limit, insert-versus-update accounting, and overlapping imports in
 * concurrent transactions, with identical outcomes on SQLite and PostgreSQL.
 */

const now = '2026-01-01T00:00:00.000Z';

/** Ids in [from, to) as the service sorts their keys: by text. */
const textOrder = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => String(from + k)).sort();

/** Keys source/sourceId for ids in [from, to), sorted as the service sorts them. */
function rows(from: number, to: number, context: (id: number) => string = (id) => `task ${id}`): UpsertRow[] {
  return textOrder(from, to).map((text) => ({ source: 'todoist', sourceId: Number(text), context: context(Number(text)) }));
}

describeEachDialect('bulk upsert of tasks', (dialect) => {
  const fixture = useStorageFixture(dialect, now);
  let sessionId: number;

  beforeAll(async () => {
    const session = await fixture.storage.db.insertInto('sessions').values(sessionRow('s', fixture.user.id)).returning('id').executeTakeFirstOrThrow();
    sessionId = session.id;
  });

  const count = async (source: string) =>
    Number(
      (await fixture.storage.db.selectFrom('tasks').select((eb) => eb.fn.countAll().as('n')).where('source', '=', source).executeTakeFirstOrThrow()).n,
    );

  it('crosses the bound-parameter limit in several statements, inserting every row once', async () => {
    // 9 parameters a row: 8192 rows is 73,728 parameters, more than PostgreSQL takes in one statement.
    const batch = rows(0, 8192);
    const stored = await fixture.storage.transaction((trx) => createTasksRepository(fixture.storage).upsert(trx, { ownerId: fixture.user.id, sessionId, rows: batch, now }));
    expect(stored).toHaveLength(8192);
    expect(stored.every((r) => r.version === 1)).toBe(true);
    expect(new Set(stored.map((r) => r.source_id)).size).toBe(8192);
    expect(await count('todoist')).toBe(8192);
  });

  it('updates what exists and inserts what does not, telling them apart by version', async () => {
    const stored = await fixture.storage.transaction((trx) =>
      createTasksRepository(fixture.storage).upsert(trx, { ownerId: fixture.user.id, sessionId, rows: rows(8000, 8400, (id) => `again ${id}`), now }),
    );
    const updated = stored.filter((r) => r.version > 1);
    const inserted = stored.filter((r) => r.version === 1);
    expect(updated).toHaveLength(192);
    expect(inserted).toHaveLength(208);
    expect(stored.every((r) => r.context === `again ${r.source_id}` && r.source_id_type === 'integer')).toBe(true);
    expect(await count('todoist')).toBe(8400);
  });

  it('overlapping imports in concurrent transactions neither duplicate, lose nor deadlock', async () => {
    // Small chunks force many statements per transaction, so the imports interleave.
    const maxParameters = 9 * 25;
    const ranges: [number, number][] = [[0, 300], [150, 450], [100, 400], [250, 600], [0, 600], [590, 610]];
    const results = await Promise.all(
      ranges.map(([from, to], i) =>
        fixture.storage.transaction((trx) =>
          createTasksRepository({ ...fixture.storage, maxParameters }).upsert(trx, {
            ownerId: fixture.user.id,
            sessionId,
            // Each import says something new: one that changes nothing writes nothing (contract section 10).
            rows: rows(from, to, (id) => `linear ${id} from import ${i}`).map((r) => ({ ...r, source: 'linear' })),
            now,
          }),
        ).then((stored) => ({ i, stored })),
      ),
    );
    const created = results.reduce((n, r) => n + r.stored.filter((row) => row.version === 1).length, 0);
    // Every key was created by exactly one import and updated by the others.
    expect(created).toBe(610);
    for (const { i, stored } of results) {
      const [from, to] = ranges[i] as [number, number];
      expect(stored.map((r) => r.source_id)).toEqual(textOrder(from, to));
    }
    expect(await count('linear')).toBe(610);
    const versions = await fixture.storage.db
      .selectFrom('tasks')
      .select(['source_id', 'version'])
      .where('source', '=', 'linear')
      .orderBy('source_id')
      .execute();
    // Each import that covered a key bumped its version once: no update was lost.
    const expected = (id: number) => ranges.filter(([from, to]) => id >= from && id < to).length;
    expect(versions.map((v) => v.version)).toEqual(versions.map((v) => expected(Number(v.source_id))));
  });
});
