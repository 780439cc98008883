import { describe, expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { createSession, sessionBody } from './sessions.test-helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachDialect('sessions CRUD over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dave: [1, 2] });

  describe('create', () => {
    it('answers 201 with Location and the full record, defaults filled in', async () => {
      const res = await t.alice.post('/api/v1/sessions', sessionBody({ name: '  Deep work  ', time: '09:05 pm' }));
      expect(res.status, res.text).toBe(201);
      const s = res.body.data;
      expect(res.headers.location).toBe(`/api/v1/sessions/${s.id}`);
      expect(Object.keys(s).sort()).toEqual(
        [
          'id', 'org_id', 'name', 'type', 'duration', 'schedule', 'time', 'timezone', 'is_public', 'collaborator', 'status',
          'website_blocker_enabled', 'website_blocker', 'snooze_enabled', 'snooze_apps', 'is_recurring', 'recurring_start',
          'recurring_ends', 'occurrence', 'recurring_days', 'recurring_month_option', 'recurring_month_week_pos',
          'recurring_month_week_day', 'fallback_option', 'created_by', 'created_at', 'updated_at', 'starts_at', 'ends_at',
          'rrule', 'participants_count', 'participation', 'phase', 'reminders',
        ].sort(),
      );
      expect(s).toMatchObject({
        org_id: 1,
        name: 'Deep work',
        type: 'standard',
        duration: 60,
        schedule: '2026-03-10',
        time: '9:05 PM',
        timezone: 'UTC',
        is_public: false,
        collaborator: [],
        status: 'waiting',
        website_blocker_enabled: false,
        website_blocker: null,
        snooze_enabled: false,
        snooze_apps: {},
        is_recurring: 0,
        recurring_start: null,
        recurring_ends: null,
        occurrence: null,
        recurring_days: [],
        fallback_option: 0,
        created_by: 'alice',
        starts_at: '2026-03-10T21:05:00.000Z',
        ends_at: '2026-03-10T22:05:00.000Z',
        rrule: null,
        participants_count: 1,
        participation: { joined: true, role: 'host', completed_at: null },
      });
      expect(s.created_at).toMatch(ISO);
      expect(s.updated_at).toMatch(ISO);
      expect(s.participation.joined_at).toMatch(ISO);
      expect(typeof s.id).toBe('number');

      const read = await t.alice.get(`/api/v1/sessions/${s.id}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toEqual(s);
    });

    it('computes starts_at/ends_at in the session time zone, across midnight', async () => {
      const s = await createSession(t.alice, { timezone: 'America/New_York', schedule: '2026-07-01', time: '11:30 PM', duration: 90 });
      expect(s.starts_at).toBe('2026-07-02T03:30:00.000Z');
      expect(s.ends_at).toBe('2026-07-02T05:00:00.000Z');
      expect(s.time).toBe('11:30 PM');
      const winter = await createSession(t.alice, { timezone: 'Europe/Berlin', schedule: '2026-01-15', time: '12:00 AM', duration: 1 });
      expect(winter.starts_at).toBe('2026-01-14T23:00:00.000Z');
      expect(winter.time).toBe('12:00 AM');
      const spelled = await createSession(t.alice, { timezone: 'europe/berlin' });
      expect(spelled.timezone).toBe('Europe/Berlin');
      expect((await createSession(t.alice, { timezone: 'US/Eastern' })).timezone).toBe('US/Eastern');
      // Names the runtime reads as another zone (Asia/Kolkata as Asia/Calcutta, links) get their IANA spelling too.
      for (const [sent, stored] of [['asia/kolkata', 'Asia/Kolkata'], ['EUROPE/KYIV', 'Europe/Kyiv'], ['us/eastern', 'US/Eastern'], ['etc/utc', 'Etc/UTC'], ['asia/calcutta', 'Asia/Calcutta']]) {
        const zoned = await createSession(t.alice, { timezone: sent, is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-12' });
        expect(zoned.timezone, sent).toBe(stored);
        expect(zoned.rrule, sent).toContain(`TZID=${stored}:`);
      }
      const noon = await createSession(t.alice, { time: '12:30 PM' });
      expect(noon.starts_at).toBe('2026-03-10T12:30:00.000Z');
    });

    it('stores every optional field as sent', async () => {
      const body = sessionBody({
        is_public: true,
        collaborator: ['bob', 'dave', 'bob'],
        status: 'in_progress',
        website_blocker_enabled: true,
        website_blocker: { mode: 'custom', category: ['social'], urls: ['example.com', 'https://news.example.org/path?q=1'] },
        snooze_enabled: true,
        snooze_apps: { slack: true, mail: false },
        is_recurring: 1,
        recurring_start: '2026-03-12',
        recurring_ends: '2026-06-30',
        occurrence: 'monthly',
        recurring_days: [1, 3],
        recurring_month_option: 'week_day',
        recurring_month_week_pos: -1,
        recurring_month_week_day: 5,
        fallback_option: 1,
        timezone: 'Asia/Tokyo',
      });
      const res = await t.alice.post('/api/v1/sessions', body);
      expect(res.status, res.text).toBe(201);
      const { time: _time, collaborator: _c, ...rest } = body;
      expect(res.body.data).toMatchObject({ ...rest, collaborator: ['bob', 'dave'], time: '9:00 AM' });
      expect(res.body.data.rrule).toContain('FREQ=MONTHLY');
      expect(res.body.data.rrule).toContain('TZID=Asia/Tokyo');
    });

    it('accepts internationalized host names and URLs as the WHATWG URL parser does, stored as sent', async () => {
      const urls = [
        'münchen.de',
        'xn--mnchen-3ya.de',
        'MÜNCHEN.DE',
        '💩.la',
        'https://münchen.de/straße?q=ä',
        'https://example.com:65535/',
        'http://example.com:0',
        'http://[::1]:8080/x',
        'http://127.0.0.1/',
      ];
      const created = await createSession(t.alice, { website_blocker: { mode: 'custom', category: [], urls } });
      expect(created.website_blocker).toEqual({ mode: 'custom', category: [], urls });
      const updated = await t.alice.put(`/api/v1/sessions/${created.id}`, { website_blocker: { mode: 'custom', urls: ['bücher.example'] } });
      expect(updated.status, updated.text).toBe(200);
      expect(updated.body.data.website_blocker.urls).toEqual(['bücher.example']);
      const refused = await t.alice.put(`/api/v1/sessions/${created.id}`, { website_blocker: { mode: 'custom', urls: ['https://bücher.example:70000/'] } });
      expect(errorPaths(refused)).toEqual(['/website_blocker/urls/0']);
    });

    it('accepts website_blocker without category/urls, filling them in', async () => {
      const s = await createSession(t.alice, { website_blocker: { mode: 'preset' } });
      expect(s.website_blocker).toEqual({ mode: 'preset', category: [], urls: [] });
    });

    it.each([
      ['name empty after trim', { name: '   ' }, ['/name']],
      ['name 201 chars', { name: 'x'.repeat(201) }, ['/name']],
      ['name not a string', { name: 5 }, ['/name']],
      ['type', { type: 'casual' }, ['/type']],
      ['duration 0', { duration: 0 }, ['/duration']],
      ['duration 1441', { duration: 1441 }, ['/duration']],
      ['duration fraction', { duration: 1.5 }, ['/duration']],
      ['duration string', { duration: '30' }, ['/duration']],
      ['schedule 2026-02-30', { schedule: '2026-02-30' }, ['/schedule']],
      ['schedule 2026-13-01', { schedule: '2026-13-01' }, ['/schedule']],
      ['schedule shape', { schedule: '2026-3-1' }, ['/schedule']],
      ['schedule year 9999', { schedule: '9999-12-31' }, ['/schedule']],
      ['schedule year 0000', { schedule: '0000-01-01' }, ['/schedule']],
      ['time 13:00 PM', { time: '13:00 PM' }, ['/time']],
      ['time 0:30 AM', { time: '0:30 AM' }, ['/time']],
      ['time 9:60 AM', { time: '9:60 AM' }, ['/time']],
      ['time 24:00 (24-hour 21:00 is accepted since contract section 10)', { time: '24:00' }, ['/time']],
      ['is_public not boolean', { is_public: 1 }, ['/is_public']],
      ['collaborator not a handle', { collaborator: ['Bob!'] }, ['/collaborator/0']],
      ['collaborator not array', { collaborator: 'bob' }, ['/collaborator']],
      ['collaborator over 100', { collaborator: Array.from({ length: 101 }, (_, i) => `u${i}`) }, ['/collaborator']],
      ['status', { status: 'done' }, ['/status']],
      ['website_blocker mode', { website_blocker: { mode: 'all', category: [], urls: [] } }, ['/website_blocker/mode']],
      ['website_blocker extra key', { website_blocker: { mode: 'preset', extra: 1 } }, ['/website_blocker/extra']],
      ['website_blocker url', { website_blocker: { mode: 'custom', urls: ['ftp://x.org'] } }, ['/website_blocker/urls/0']],
      ['website_blocker url with space', { website_blocker: { mode: 'custom', urls: ['ok.com', 'bad host.com'] } }, ['/website_blocker/urls/1']],
      ['website_blocker url port 99999', { website_blocker: { mode: 'custom', urls: ['example.com', 'https://example.com:99999/'] } }, ['/website_blocker/urls/1']],
      ['website_blocker url port 65536', { website_blocker: { mode: 'custom', urls: ['http://example.com:65536'] } }, ['/website_blocker/urls/0']],
      ['website_blocker url port not a number', { website_blocker: { mode: 'custom', urls: ['https://example.com:https/'] } }, ['/website_blocker/urls/0']],
      ['website_blocker url bad IPv4', { website_blocker: { mode: 'custom', urls: ['http://999.1.1.1/'] } }, ['/website_blocker/urls/0']],
      ['website_blocker url with credentials', { website_blocker: { mode: 'custom', urls: ['https://user@example.com/'] } }, ['/website_blocker/urls/0']],
      ['website_blocker host with port', { website_blocker: { mode: 'custom', urls: ['example.com:443'] } }, ['/website_blocker/urls/0']],
      ['website_blocker host with underscore', { website_blocker: { mode: 'custom', urls: ['a_b.example.com'] } }, ['/website_blocker/urls/0']],
      ['website_blocker host bad punycode', { website_blocker: { mode: 'custom', urls: ['xn--a.example'] } }, ['/website_blocker/urls/0']],
      ['website_blocker host label over 63 once in ASCII', { website_blocker: { mode: 'custom', urls: [`${'ü'.repeat(60)}.de`] } }, ['/website_blocker/urls/0']],
      ['website_blocker not an object', { website_blocker: 'preset' }, ['/website_blocker']],
      ['website_blocker 501 urls', { website_blocker: { mode: 'custom', urls: Array.from({ length: 501 }, (_, i) => `h${i}.com`) } }, ['/website_blocker/urls']],
      ['snooze_apps value', { snooze_apps: { slack: 'yes' } }, ['/snooze_apps/slack']],
      ['snooze_apps empty key', { snooze_apps: { '': true } }, ['/snooze_apps']],
      ['snooze_apps 51 keys', { snooze_apps: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`app${i}`, true])) }, ['/snooze_apps']],
      ['is_recurring 2', { is_recurring: 2 }, ['/is_recurring']],
      ['is_recurring true', { is_recurring: true }, ['/is_recurring']],
      ['recurring_start', { recurring_start: '2026-02-29' }, ['/recurring_start']],
      ['occurrence', { occurrence: 'yearly' }, ['/occurrence']],
      ['recurring_days 7', { recurring_days: [7] }, ['/recurring_days/0']],
      ['recurring_days -1', { recurring_days: [-1] }, ['/recurring_days/0']],
      ['month option', { recurring_month_option: 'last' }, ['/recurring_month_option']],
      ['week pos 5', { recurring_month_week_pos: 5 }, ['/recurring_month_week_pos']],
      ['week pos 0', { recurring_month_week_pos: 0 }, ['/recurring_month_week_pos']],
      ['week day 7', { recurring_month_week_day: 7 }, ['/recurring_month_week_day']],
      ['fallback 2', { fallback_option: 2 }, ['/fallback_option']],
      ['timezone not IANA', { timezone: 'Mars/Base' }, ['/timezone']],
      ['timezone offset', { timezone: '+02:00' }, ['/timezone']],
      ['unknown field', { colour: 'red' }, ['/colour']],
      ['recurring without occurrence', { is_recurring: 1 }, ['/occurrence']],
      ['recurring_ends before start', { is_recurring: 1, occurrence: 'daily', recurring_start: '2026-04-01', recurring_ends: '2026-03-31' }, ['/recurring_ends']],
      ['recurring_ends before schedule', { is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-09' }, ['/recurring_ends']],
      ['collaborator outside the org', { collaborator: ['bob', 'carol'] }, ['/collaborator/1']],
      ['collaborator unknown user', { collaborator: ['nobody'] }, ['/collaborator/0']],
    ])('rejects %s with 422 at the field', async (_label, overrides, paths) => {
      const res = await t.alice.post('/api/v1/sessions', sessionBody(overrides));
      expect(errorPaths(res)).toEqual(paths);
    });

    it('accepts every boundary value', async () => {
      for (const overrides of [
        { name: 'x'.repeat(200), duration: 1, time: '12:59 PM' },
        { name: ` ${'y'.repeat(200)} `, duration: 1440, time: '1:00 am', schedule: '2028-02-29' },
        { schedule: '9998-12-31', time: '11:59 PM', timezone: 'Pacific/Honolulu', duration: 1440 },
        { schedule: '0001-01-01', time: '12:00 AM', timezone: 'Pacific/Kiritimati' },
        { website_blocker: { mode: 'custom', category: [], urls: Array.from({ length: 500 }, (_, i) => `h${i}.example.com`) } },
        { snooze_apps: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`app${i}`, i % 2 === 0])) },
        { is_recurring: 1, occurrence: 'weekly', recurring_days: [0, 2, 6], recurring_ends: '2026-03-10' },
        { recurring_month_week_pos: 4, recurring_month_week_day: 0, fallback_option: 1, timezone: 'America/Argentina/Buenos_Aires' },
      ]) {
        await createSession(t.alice, overrides);
      }
    });

    it('lists every bad field in one 422, including the rules the schema cannot express', async () => {
      const res = await t.alice.post('/api/v1/sessions', {
        org_id: 1,
        name: '',
        type: 'x',
        duration: 0,
        schedule: '2026-02-30',
        time: '13:00 PM',
        timezone: 'Nowhere/City',
        collaborator: ['carol'],
        is_recurring: 1,
      });
      expect(errorPaths(res)).toEqual(['/collaborator/0', '/duration', '/name', '/occurrence', '/schedule', '/time', '/timezone', '/type']);
    });

    it('explains each nullable field’s rule without noise from its null alternative', async () => {
      const res = await t.alice.post(
        '/api/v1/sessions',
        sessionBody({ occurrence: 'yearly', recurring_ends: '2026-02-30', recurring_month_week_pos: 9, website_blocker: { mode: 'x' } }),
      );
      expect(errorPaths(res)).toEqual(['/occurrence', '/recurring_ends', '/recurring_month_week_pos', '/website_blocker/mode']);
      const messages = (res.body.errors as { message: string }[]).map((e) => e.message);
      for (const m of messages) expect(m).not.toMatch(/must be null|allowed form/);
      expect(messages.join(' ')).toContain('"daily"');
    });

    it('lists schema and cross-field errors together on update too', async () => {
      const s = await createSession(t.alice);
      const res = await t.alice.put(`/api/v1/sessions/${s.id}`, { duration: 0, is_recurring: 1, timezone: 'Mars/Base', collaborator: ['carol'] });
      expect(errorPaths(res)).toEqual(['/collaborator/0', '/duration', '/occurrence', '/timezone']);
      // A bad path id is still 404, whatever the body.
      expect((await t.alice.put('/api/v1/sessions/abc', { duration: 0 })).status).toBe(404);
      expect((await t.bob.put(`/api/v1/sessions/${s.id}`, { duration: 0 })).status).toBe(404);
    });

    it('requires the required fields and a JSON object', async () => {
      const res = await t.alice.post('/api/v1/sessions', {});
      expect(errorPaths(res)).toEqual(['/duration', '/name', '/org_id', '/schedule', '/time', '/type']);
      for (const body of ['null', '[]', '"x"', '7']) {
        expect(errorPaths(await t.alice.request('POST', '/api/v1/sessions', body, { 'content-type': 'application/json' }))).toEqual(['/']);
      }
      const s = await createSession(t.alice);
      expect(errorPaths(await t.alice.request('PUT', `/api/v1/sessions/${s.id}`, '[]', { 'content-type': 'application/json' }))).toEqual(['/']);
    });

    it('ignores read-only fields sent on create', async () => {
      const s = await createSession(t.alice, {
        id: 999999,
        created_by: 'bob',
        created_at: '2000-01-01T00:00:00.000Z',
        starts_at: 'nonsense',
        participants_count: 42,
        participation: { joined: false },
        rrule: 'RRULE:FREQ=DAILY',
        occurrence_date: '2020-01-01',
      });
      expect(s.id).not.toBe(999999);
      expect(s.created_by).toBe('alice');
      expect(s.created_at).not.toBe('2000-01-01T00:00:00.000Z');
      expect(s.participants_count).toBe(1);
      expect(s.rrule).toBeNull();
      expect(s.starts_at).toBe('2026-03-10T09:00:00.000Z');
    });

    it('ignores every read-only field of any record, `owner` included, on create and update', async () => {
      const s = await createSession(t.alice, { owner: 'bob', created_by: 'bob', updated_at: 'x', ends_at: 1 });
      expect(s.created_by).toBe('alice');
      const res = await t.alice.put(`/api/v1/sessions/${s.id}`, { ...s, name: 'Renamed', owner: 'bob', created_by: 'bob', id: 1 });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ id: s.id, name: 'Renamed', created_by: 'alice' });
    });

    it('answers 403 for an org the user is not in, 400 for bad JSON, 415 for non-JSON, 401 without a token', async () => {
      const res = await t.alice.post('/api/v1/sessions', sessionBody({ org_id: 2 }));
      expect(res.status).toBe(403);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
      // Field rules broken as well: the 422 comes first, each rule checked after the schema's too.
      for (const [broken, path] of [
        [{ timezone: 'Bad/Zone' }, '/timezone'],
        [{ is_recurring: 1 }, '/occurrence'],
        [{ is_recurring: 1, occurrence: 'daily', recurring_ends: '2020-01-01' }, '/recurring_ends'],
      ] as const) {
        const both = await t.alice.post('/api/v1/sessions', sessionBody({ org_id: 2, ...broken }));
        expect(both.status, both.text).toBe(422);
        expect(errorPaths(both)).toEqual([path]);
      }
      expect((await t.alice.request('POST', '/api/v1/sessions', '{"name":', { 'content-type': 'application/json' })).status).toBe(400);
      expect((await t.alice.request('POST', '/api/v1/sessions', 'name=x', { 'content-type': 'text/plain' })).status).toBe(415);
      expect((await t.anonymous.post('/api/v1/sessions', sessionBody())).status).toBe(401);
    });
  });

  describe('read', () => {
    it('answers 404 for unknown, invisible, other-org and malformed ids', async () => {
      const s = await createSession(t.alice);
      expect((await t.alice.get('/api/v1/sessions/99999999')).status).toBe(404);
      expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await t.carol.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      for (const bad of ['abc', '0', '-1', '1.5', '99999999999999999999']) {
        expect((await t.alice.get(`/api/v1/sessions/${bad}`)).status).toBe(404);
      }
    });
  });

  describe('update', () => {
    it('changes any subset and keeps the rest', async () => {
      const s = await createSession(t.alice, { is_public: true, snooze_apps: { a: true } });
      const res = await t.alice.put(`/api/v1/sessions/${s.id}`, { duration: 30, time: '10:15 am', timezone: 'Europe/Paris' });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({
        ...s,
        duration: 30,
        time: '10:15 AM',
        timezone: 'Europe/Paris',
        starts_at: '2026-03-10T09:15:00.000Z',
        ends_at: '2026-03-10T09:45:00.000Z',
        updated_at: expect.any(String),
      });
      expect(res.body.data.updated_at >= s.updated_at).toBe(true);
      expect(res.body.data.created_at).toBe(s.created_at);
      expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data).toEqual(res.body.data);
    });

    it('takes back the whole record as read, unchanged', async () => {
      const s = await createSession(t.alice, {
        collaborator: ['bob'],
        website_blocker: { mode: 'preset', category: ['news'], urls: [] },
        is_recurring: 1,
        occurrence: 'weekly',
        recurring_days: [2, 4],
        timezone: 'Europe/Berlin',
      });
      const read = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data;
      const res = await t.alice.put(`/api/v1/sessions/${s.id}`, read);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual(read);
      expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).status).toBe(200);
    });

    it('validates the merged session against every create rule', async () => {
      const s = await createSession(t.alice);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { is_recurring: 1 }))).toEqual(['/occurrence']);
      const series = await createSession(t.alice, { is_recurring: 1, occurrence: 'daily', recurring_start: '2026-04-01' });
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${series.id}`, { recurring_ends: '2026-03-31' }))).toEqual(['/recurring_ends']);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${series.id}`, { occurrence: null }))).toEqual(['/occurrence']);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { duration: 0, schedule: '2026-02-30', colour: 1 }))).toEqual([
        '/colour', '/duration', '/schedule',
      ]);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { collaborator: ['carol'] }))).toEqual(['/collaborator/0']);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { name: ' ' }))).toEqual(['/name']);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, {}))).toEqual(['/']);
      expect(errorPaths(await t.alice.put(`/api/v1/sessions/${s.id}`, { id: 3, created_by: 'bob' }))).toEqual(['/']);
      // Nothing of the rejected updates was applied.
      expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data).toMatchObject({ is_recurring: 0, duration: 60, name: 'Deep work' });
    });

    it('moves status only forward', async () => {
      const s = await createSession(t.alice);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'waiting' })).status).toBe(200);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'completed' })).body.data.status).toBe('completed');
      const back = await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'waiting' });
      expect(back.status).toBe(409);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'in_progress' })).status).toBe(409);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'completed', name: 'Renamed' })).status).toBe(200);
      const mid = await createSession(t.alice, { status: 'in_progress' });
      expect((await t.alice.put(`/api/v1/sessions/${mid.id}`, { status: 'waiting' })).status).toBe(409);
      expect((await t.alice.put(`/api/v1/sessions/${mid.id}`, { status: 'completed' })).status).toBe(200);
    });

    it('lets only the creator change it: same-org viewer 403, invisible 404', async () => {
      const pub = await createSession(t.alice, { is_public: true });
      const priv = await createSession(t.alice);
      expect((await t.bob.put(`/api/v1/sessions/${pub.id}`, { name: 'Mine' })).status).toBe(403);
      expect((await t.bob.put(`/api/v1/sessions/${priv.id}`, { name: 'Mine' })).status).toBe(404);
      expect((await t.carol.put(`/api/v1/sessions/${pub.id}`, { name: 'Mine' })).status).toBe(404);
      expect((await t.alice.put('/api/v1/sessions/99999999', { name: 'Mine' })).status).toBe(404);
      expect((await t.alice.get(`/api/v1/sessions/${pub.id}`)).body.data.name).toBe('Deep work');
    });

    it('replaces collaborators when sent, keeps them otherwise, and moves orgs only where the user belongs', async () => {
      const dave = await t.user('dave', [1, 2]);
      const s = await createSession(t.alice, { collaborator: ['bob', 'dave'] });
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { name: 'Kept' })).body.data.collaborator).toEqual(['bob', 'dave']);
      const res = await t.alice.put(`/api/v1/sessions/${s.id}`, { collaborator: ['dave'] });
      expect(res.body.data.collaborator).toEqual(['dave']);
      expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await dave.get(`/api/v1/sessions/${s.id}`)).status).toBe(200);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { collaborator: [] })).body.data.collaborator).toEqual([]);
      expect((await dave.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { org_id: 2 })).status).toBe(403);
    });
  });

  describe('delete', () => {
    it('deletes for the creator only; then 404', async () => {
      const pub = await createSession(t.alice, { is_public: true });
      expect((await t.bob.delete(`/api/v1/sessions/${pub.id}`)).status).toBe(403);
      expect((await t.carol.delete(`/api/v1/sessions/${pub.id}`)).status).toBe(404);
      const del = await t.alice.delete(`/api/v1/sessions/${pub.id}`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      expect((await t.alice.get(`/api/v1/sessions/${pub.id}`)).status).toBe(404);
      expect((await t.alice.delete(`/api/v1/sessions/${pub.id}`)).status).toBe(404);
    });

    it('keeps the tasks committed to a deleted session, with session_id null', async () => {
      const s = await createSession(t.alice, { is_public: true });
      const mine = await t.alice.post('/api/v1/tasks', { context: 'write', session_id: s.id });
      expect(mine.status, mine.text).toBe(201);
      const bobs = await t.bob.post('/api/v1/tasks', { context: 'read', session_id: s.id });
      expect(bobs.status, bobs.text).toBe(201);
      expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=series`)).status).toBe(204);
      expect((await t.alice.get(`/api/v1/tasks/${mine.body.data.id}`)).body.data).toMatchObject({ context: 'write', session_id: null });
      expect((await t.bob.get(`/api/v1/tasks/${bobs.body.data.id}`)).body.data).toMatchObject({ context: 'read', session_id: null });
    });

    it('rejects scope=occurrence on a one-off session and bad scopes with 422', async () => {
      const s = await createSession(t.alice);
      expect(errorPaths(await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence`))).toEqual(['/scope']);
      expect(errorPaths(await t.alice.delete(`/api/v1/sessions/${s.id}?scope=following&date=2026-03-10`))).toEqual(['/scope']);
      expect(errorPaths(await t.alice.delete(`/api/v1/sessions/${s.id}?scope=everything`))).toEqual(['/scope']);
      expect(errorPaths(await t.alice.delete(`/api/v1/sessions/${s.id}?scope=series&date=2026-02-30`))).toEqual(['/date']);
      expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).status).toBe(200);
    });
  });
});
