import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { PAGE_BYTE_BUDGET } from '../../toolkit/api.js';
import { type Page, type TaskRecord, newSession } from './tasks.test-helpers.js';

describeEachDialect('GET /tasks byte budget', (dialect) => {
  const t = useTestApp(dialect, { alice: [1] });
  const contexts: string[] = [];

  beforeAll(async () => {
    const session = await newSession(t.alice, 1);
    // Tasks at the weight limit: 2,000 three-byte characters each, so a full page of
    // 1,000 would be about 6 MB.
    for (let batch = 0; batch < 4; batch++) {
      const tasks = Array.from({ length: 100 }, (_, i) => {
        const n = String(batch * 100 + i).padStart(3, '0');
        return { context: `${n} ${'€'.repeat(1996)}`, source: 'linear', source_id: `ENG-${n}` };
      });
      const res = await t.alice.post('/api/v1/tasks/bulk', { session_id: session, tasks });
      expect(res.status, res.text.slice(0, 300)).toBe(200);
      contexts.push(...tasks.map((x) => x.context));
    }
  });

  it('stops a page at its byte budget and continues it with next_cursor', async () => {
    const first = await t.alice.get<Page>('/api/v1/tasks?limit=1000');
    expect(first.status).toBe(200);
    expect(first.body.data.length).toBeGreaterThan(0);
    expect(first.body.data.length).toBeLessThan(400);
    expect(first.body.next_cursor).not.toBeNull();
    expect(Buffer.byteLength(first.text)).toBeLessThan(PAGE_BYTE_BUDGET * 1.1);
    const seen = first.body.data.map((x: TaskRecord) => x.context);
    for (let cursor = first.body.next_cursor; cursor !== null; ) {
      const page = await t.alice.get<Page>(`/api/v1/tasks?limit=1000&cursor=${encodeURIComponent(cursor)}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((x: TaskRecord) => x.context));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(contexts);
  });
});
