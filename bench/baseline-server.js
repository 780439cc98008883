/* global process, Buffer, URL */
// The "raw" baseline: node:http + the bare driver (a better-sqlite3 prepared statement or a
// named pg statement), no framework, no validation, no routing. GET /tasks does the same
// work as the service: it checks the bearer token's shape, hashes it, looks the token, its
// user and the user's orgs up (the service's one statement), then reads the user's tasks and
// serves the same bytes as the service (same query, key order, page size and cursor). Plus a
// tiny JSON body for the framework-free ceiling of this machine.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { crc32 } from 'node:zlib';
import Database from 'better-sqlite3';
import pg from 'pg';

// argv: a SQLite file path or a postgres:// URL.
const [, , target] = process.argv;
// The service's findTokenWithOrgs, as Kysely compiles it (one row per org).
const AUTH_SQL =
  'select "tokens"."id" as "tokenId", "users"."id" as "userId", "users"."handle" as "handle", "users"."timezone" as "timezone", "tokens"."expires_at" as "expiresAt", ' +
  '"tokens"."revoked_at" as "revokedAt", "tokens"."last_used_at" as "lastUsedAt", "memberships"."org_id" as "orgId" ' +
  'from "tokens" inner join "users" on "users"."id" = "tokens"."user_id" left join "memberships" on "memberships"."user_id" = "users"."id" ' +
  'where "tokens"."token_hash" = $1 order by "memberships"."org_id"';
const LIST_SQL = 'select * from tasks where owner_id = $1 order by id limit $2';
// The service's page size when no limit is asked for (the bench asks only for limits the service accepts).
const DEFAULT_LIMIT = 1000;

let lookUp;
let listTasks;
if (/^postgres(ql)?:\/\//.test(target)) {
  // bigint ids as numbers, as the service configures its pool.
  const types = { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) };
  const pool = new pg.Pool({ connectionString: target, max: 10, types });
  // Planned for each owner's values, as an unnamed statement is: after five runs a named statement
  // gets PostgreSQL's generic plan, which for `owner_id = $1 order by id limit $2` walks the primary
  // key filtering on owner (3,924 rows read for 51 at scale 0.05; the baseline ran at ~0.3× of itself).
  pool.on('connect', (client) => {
    client.query('set plan_cache_mode = force_custom_plan').catch(() => undefined);
  });
  // Named statements are parsed once per connection, like prepared statements.
  lookUp = async (hash) => (await pool.query({ name: 'auth', text: AUTH_SQL, values: [hash] })).rows;
  listTasks = async (owner, limit) => (await pool.query({ name: 'list', text: LIST_SQL, values: [owner, limit] })).rows;
} else {
  const db = new Database(target, { readonly: true });
  const auth = db.prepare(AUTH_SQL.replace(/\$\d/g, '?'));
  const list = db.prepare(LIST_SQL.replace(/\$\d/g, '?'));
  lookUp = async (hash) => auth.all(hash);
  listTasks = async (owner, limit) => list.all(owner, limit);
}
const tiny = Buffer.from('{"ok":true}');

// The token format of src/features/auth/auth.token.ts: fst_ + 32 base62 + 6 base62 of the CRC-32 of the random part.
const TOKEN = /^fst_[0-9A-Za-z]{38}$/;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function wellFormed(token) {
  if (!TOKEN.test(token)) return false;
  let rest = crc32(token.slice(4, 36));
  let sum = '';
  for (let i = 0; i < 6; i++) {
    sum = ALPHABET[rest % 62] + sum;
    rest = Math.floor(rest / 62);
  }
  return token.slice(36) === sum;
}

/** The token's user and orgs, or undefined for anything unusable (as the service decides). */
async function authenticate(header) {
  const token = header?.startsWith('Bearer ') ? header.slice(7) : undefined;
  if (token === undefined || !wellFormed(token)) return undefined;
  const rows = await lookUp(createHash('sha256').update(token).digest('hex'));
  const first = rows[0];
  if (first === undefined || first.revokedAt !== null) return undefined;
  if (first.expiresAt !== null && first.expiresAt <= new Date().toISOString()) return undefined;
  return { id: first.userId, handle: first.handle, orgIds: rows.flatMap((r) => (r.orgId === null ? [] : [r.orgId])) };
}

function taskJson(r, handle) {
  return {
    id: String(r.id),
    context: r.context,
    is_completed: r.is_completed === 1,
    owner: handle,
    source: r.source,
    // As stored: the text, and the JSON type it was sent with (toTask in src/features/tasks/tasks.model.ts).
    source_id: r.source_id === null ? null : r.source_id_type === 'integer' ? Number(r.source_id) : r.source_id,
    session_id: r.session_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer(async (req, res) => {
  if (req.url === '/tiny') {
    send(res, 200, tiny);
    return;
  }
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/api/v1/tasks') {
    const user = await authenticate(req.headers.authorization);
    if (user === undefined) {
      send(res, 401, '{"title":"Unauthorized"}');
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? DEFAULT_LIMIT);
    const rows = await listTasks(user.id, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const cursor = rows.length > limit && last !== undefined ? Buffer.from(JSON.stringify([last.id])).toString('base64url') : null;
    send(res, 200, JSON.stringify({ data: page.map((r) => taskJson(r, user.handle)), next_cursor: cursor }));
    return;
  }
  res.writeHead(404);
  res.end();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
