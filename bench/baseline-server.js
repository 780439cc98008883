/* global process, Buffer */
// The "raw" baseline: node:http + better-sqlite3 prepared statements, no framework,
// no auth, no validation. It serves the same GET /tasks bytes as the service for
// the bench reader (same database file, same query shape, same key order), and a
// tiny JSON body for the framework-free ceiling of this machine.
import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import pg from 'pg';

// argv: a SQLite file path or a postgres:// URL, the reader's user id and handle.
const [, , target, ownerArg, handle] = process.argv;
const owner = Number(ownerArg);
const LIST_SQL = 'select * from tasks where owner_id = $1 order by id limit $2';
let listTasks;
if (/^postgres(ql)?:\/\//.test(target)) {
  // bigint ids as numbers, as the service configures its pool.
  const types = { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) };
  const pool = new pg.Pool({ connectionString: target, max: 10, types });
  // A named statement is parsed once per connection, like a prepared statement.
  listTasks = async () => (await pool.query({ name: 'list', text: LIST_SQL, values: [owner, 101] })).rows;
} else {
  const db = new Database(target, { readonly: true });
  const list = db.prepare(LIST_SQL.replace(/\$\d/g, '?'));
  listTasks = async () => list.all(owner, 101);
}
const tiny = Buffer.from('{"ok":true}');

function taskJson(r) {
  return {
    id: String(r.id),
    context: r.context,
    is_completed: r.is_completed === 1,
    owner: handle,
    source: r.source,
    source_id: r.source_id,
    session_id: r.session_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const server = createServer(async (req, res) => {
  if (req.url === '/tiny') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': tiny.length });
    res.end(tiny);
    return;
  }
  if (req.url === '/api/v1/tasks') {
    const rows = await listTasks();
    const page = rows.slice(0, 100);
    const body = JSON.stringify({ data: page.map(taskJson), next_cursor: rows.length > 100 ? 'unused' : null });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  res.writeHead(404);
  res.end();
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
