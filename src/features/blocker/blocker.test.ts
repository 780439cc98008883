import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, type UserClient, createTestApp, describeEachDialect } from '../../../test/helpers/harness.js';
import { BLOCKER_CATEGORIES } from './blocker.categories.js';

/* Contract section 14, "Website-blocker categories": the presets, and only they, may be named. */

const session = { org_id: 1, name: 'Focus', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' };

describeEachDialect('website-blocker categories', (dialect) => {
  let t: TestApp;
  let alice: UserClient;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user('alice', [1]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists the eight preset categories, each with its domains', async () => {
    const res = await alice.get<{ data: { id: string; name: string; domains: string[] }[] }>('/api/v1/blocker/categories');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c) => c.id)).toEqual(['social', 'news', 'video', 'shopping', 'games', 'adult', 'chat', 'email']);
    for (const category of res.body.data) {
      expect(category.domains.length, category.id).toBeGreaterThan(3);
      expect(category.domains).toEqual([...BLOCKER_CATEGORIES[category.id as keyof typeof BLOCKER_CATEGORIES].domains]);
      for (const domain of category.domains) expect(domain).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
    }
    expect(res.body.data.find((c) => c.id === 'video')?.domains).toContain('youtube.com');
  });

  it('needs a token', async () => {
    expect((await t.anonymous.get('/api/v1/blocker/categories')).status).toBe(401);
  });

  it('answers an unknown category with a 422 naming it, on create and on update', async () => {
    const created = await alice.post<{ errors: { path: string; message: string }[] }>('/api/v1/sessions', {
      ...session,
      website_blocker_enabled: true,
      website_blocker: { mode: 'preset', category: ['social', 'gambling'] },
    });
    expect(created.status).toBe(422);
    expect(created.body.errors).toEqual([{ path: '/website_blocker/category/1', message: 'must be one of "social", "news", "video", "shopping", "games", "adult", "chat", "email"' }]);

    const ok = await alice.post<{ data: { id: number; website_blocker: { category: string[] } } }>('/api/v1/sessions', {
      ...session,
      website_blocker_enabled: true,
      website_blocker: { mode: 'preset', category: ['social', 'email'] },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.website_blocker.category).toEqual(['social', 'email']);
    const updated = await alice.put(`/api/v1/sessions/${ok.body.data.id}`, { website_blocker: { mode: 'preset', category: ['Social'] } });
    expect(updated.status).toBe(422);
  });
});
