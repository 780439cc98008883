/* global process, Buffer, URL */
// Issue 36's yardstick: GET /api/v1/sessions done plainly. node:http + better-sqlite3 on a copy of
// the bench's database: the token lookup, then ONE statement that walks an index in page order
// over the reader's orgs (visibility and filters tested on the rows it passes), then the page
// built with JSON.parse / JSON.stringify. No cache, no framework, no validation beyond the shape.
// argv: the SQLite file (a copy: this adds the one index the undated statement walks).
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]);
db.pragma('journal_mode = wal');
// Each statement walks one index in page order that also holds what visibility and the filters
// test, so the table is read only for the rows of the page: sessions by start, occurrences by start.
db.exec('create index if not exists plain_sessions on sessions (starts_at, id, org_id, is_public, created_by, type, status, name)');
db.exec('create index if not exists plain_occurrences on session_occurrences (starts_at, session_id, occurrence_date, org_id, is_public, created_by, type, completed)');
db.exec('analyze');

const auth = db.prepare(
  'select t.user_id, m.org_id from tokens t left join memberships m on m.user_id = t.user_id where t.token_hash = ? and t.revoked_at is null',
);

// Visible: in one of the reader's orgs, and public, the reader's own, or one the reader collaborates on or joined.
// `t` is the table walked (sessions, or occurrences, which carry their session's org, creator and type).
const visible = (t, id) => `${t}.org_id in (select value from json_each(@orgs)) and (${t}.is_public = 1 or ${t}.created_by = @user
  or exists (select 1 from session_collaborators c where c.session_id = ${id} and c.user_id = @user)
  or exists (select 1 from session_participants p where p.session_id = ${id} and p.user_id = @user))
  and (@type is null or ${t}.type = @type) and (@keyword is null or instr(lower(s.name), lower(@keyword)) > 0)`;
const FIELDS = `s.*, (select handle from users where id = s.created_by) as creator,
  (select json_group_array(handle) from (select u.handle from session_collaborators c join users u on u.id = c.user_id
   where c.session_id = s.id order by u.handle)) as collaborators`;

const undated = db.prepare(`select ${FIELDS},
  (select count(*) from session_participants p where p.session_id = s.id and p.user_id <> s.created_by) as participants
  from sessions s where ${visible('s', 's.id')} and (@completed is null or (s.status = 'completed') = @completed)
  order by s.starts_at, s.id limit @limit`);

// Occurrences whose local date is in the range start within a day of it on either side (UTC-12 … UTC+14).
const dated = db.prepare(`select ${FIELDS}, o.occurrence_date, o.starts_at as o_starts, o.ends_at as o_ends, o.completed as o_completed,
  (select count(*) from session_participants p where p.session_id = s.id and p.occurrence_date = o.occurrence_date and p.user_id <> s.created_by) as participants
  from session_occurrences o join sessions s on s.id = o.session_id
  where o.starts_at >= @lowest and o.starts_at < @highest and o.occurrence_date between @from and @to
  and ${visible('o', 'o.session_id')} and (@completed is null or o.completed = @completed)
  order by o.starts_at, o.session_id, o.occurrence_date limit @limit`);

const day = (date, days) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString();

function clock(minutes) {
  const h = Math.floor(minutes / 60);
  return `${((h + 11) % 12) + 1}:${String(minutes % 60).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
}

function phase(startsAt, endsAt, now) {
  return now < startsAt ? 'upcoming' : now < endsAt ? 'ongoing' : 'ended';
}

function record(r, now) {
  const startsAt = r.o_starts ?? r.starts_at;
  const endsAt = r.o_ends ?? r.ends_at;
  return {
    id: r.id,
    org_id: r.org_id,
    name: r.name,
    type: r.type,
    duration: r.duration,
    schedule: r.schedule,
    time: clock(r.time_minutes),
    timezone: r.timezone,
    is_public: r.is_public === 1,
    collaborator: JSON.parse(r.collaborators),
    status: r.o_completed === 1 ? 'completed' : r.status,
    phase: phase(startsAt, endsAt, now),
    website_blocker_enabled: r.website_blocker_enabled === 1,
    website_blocker: r.website_blocker === null ? null : JSON.parse(r.website_blocker),
    snooze_enabled: r.snooze_enabled === 1,
    snooze_apps: JSON.parse(r.snooze_apps),
    is_recurring: r.is_recurring,
    recurring_start: r.recurring_start,
    recurring_ends: r.recurring_ends,
    occurrence: r.occurrence,
    recurring_days: JSON.parse(r.recurring_days),
    recurring_month_option: r.recurring_month_option,
    recurring_month_week_pos: r.recurring_month_week_pos,
    recurring_month_week_day: r.recurring_month_week_day,
    fallback_option: r.fallback_option,
    created_by: r.creator,
    created_at: r.created_at,
    updated_at: r.updated_at,
    starts_at: startsAt,
    ends_at: endsAt,
    rrule: r.rrule,
    participants_count: r.participants,
    ...(r.occurrence_date === undefined ? {} : { occurrence_date: r.occurrence_date }),
  };
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function list(url, user, orgs) {
  const q = (name) => url.searchParams.get(name);
  const limit = Number(q('limit') ?? 100);
  const completed = q('completed') === null ? null : Number(q('completed'));
  const params = { user, orgs: JSON.stringify(orgs), type: q('type'), keyword: q('keyword'), completed, limit: limit + 1 };
  const from = q('date') ?? q('day_start');
  const rows =
    from === null
      ? undated.all(params)
      : dated.all({ ...params, from, to: q('date') ?? q('day_ends'), lowest: day(from, -1), highest: day(q('date') ?? q('day_ends'), 2) });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const key = last?.o_starts === undefined ? [last?.starts_at, last?.id] : [last.o_starts, last.id, last.occurrence_date];
  const cursor = rows.length > limit ? Buffer.from(JSON.stringify(key)).toString('base64url') : null;
  const now = new Date().toISOString();
  return JSON.stringify({ data: page.map((r) => record(r, now)), next_cursor: cursor });
}

const server = createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname !== '/api/v1/sessions') {
    send(res, 404, '{"title":"Not Found"}');
    return;
  }
  const header = req.headers.authorization ?? '';
  const token = header.startsWith('Bearer fst_') ? header.slice(7) : '';
  const rows = auth.all(createHash('sha256').update(token).digest('hex'));
  if (rows.length === 0) {
    send(res, 401, '{"title":"Unauthorized"}');
    return;
  }
  const orgs = rows.flatMap((r) => (r.org_id === null ? [] : [r.org_id]));
  send(res, 200, list(url, rows[0].user_id, orgs));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
