import path from 'node:path';
import { Linter } from 'eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the rule is plain JavaScript, like eslint.config.js.
import tables from '../../eslint/tables.js';

/** What `focus/table-owners` says of `code` placed at `file` (relative to the repository). */
function messagesAt(file: string, code: string): string[] {
  const linter = new Linter({ cwd: process.cwd() });
  const config = [{ files: ['**/*.ts'], plugins: { focus: tables as never }, rules: { 'focus/table-owners': 'error' as const } }];
  return linter.verify(code, config, { filename: path.join(process.cwd(), file) }).map((m) => m.message);
}

describe('focus/table-owners (docs/architecture.md, "Each table has one owner")', () => {
  it("refuses a feature naming another's table, in any query form and with an alias", () => {
    expect(messagesAt('src/features/webhooks/webhooks.x.ts', "db.selectFrom('webhooks').innerJoin('users as u', 'u.id', 'webhooks.user_id');")).toEqual([
      expect.stringMatching(/^users is auth's table/),
    ]);
    expect(messagesAt('src/features/calendar/calendar.x.ts', "db.updateTable('tasks'); db.deleteFrom('session_access'); db.insertInto('changes');")).toHaveLength(3);
    expect(messagesAt('src/app/x.ts', "db.selectFrom('tokens');")).toEqual([expect.stringMatching(/^tokens is auth's table/)]);
  });

  it('lets the owner, storage, tests and the listed crossings name a table', () => {
    expect(messagesAt('src/features/auth/auth.x.ts', "db.selectFrom('users').innerJoin('memberships', 'a', 'b');")).toEqual([]);
    expect(messagesAt('src/changelog/changelog.x.ts', "db.selectFrom('changes');")).toEqual([]);
    expect(messagesAt('src/storage/migrations/0099_x.ts', "db.selectFrom('webhooks');")).toEqual([]);
    expect(messagesAt('src/features/tasks/tasks.x.test.ts', "db.selectFrom('sessions');")).toEqual([]);
    expect(messagesAt('src/features/sessions/sessions.writes.ts', "db.updateTable('tasks');")).toEqual([]);
    // A crossing is of one file and one table.
    expect(messagesAt('src/features/sessions/sessions.writes.ts', "db.selectFrom('users');")).toHaveLength(1);
  });
});
