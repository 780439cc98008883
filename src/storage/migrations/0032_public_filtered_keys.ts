import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * An org's public sessions in listing order by type, and its completed ones, each entry with
 * what the keys statement reads (the columns of sessions_public_keys_idx): a page filtered on
 * `type` or `completed=1` walks the matching entries only, not every public session of the org
 * (issue 36: a keyword + completed page walked ~900 entries per org, two thirds of them not
 * completed, for 18–30 matches). The listing names `is_public = 1` and the status as literals,
 * so that a named statement's generic plan matches these partial indexes.
 * PostgreSQL only: SQLite's planner kept the org's keys index for these pages, so there they
 * would only cost writes (0034 gives SQLite both, shaped for its planner).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  if (dialect.name !== 'postgres') return;
  await db.schema
    .createIndex('sessions_public_type_idx')
    .on('sessions')
    .columns(['org_id', 'type', 'starts_at', 'id', 'status', 'created_by', 'search_name', 'is_recurring', 'row_version'])
    .where(sql.ref('is_public'), '=', 1)
    .execute();
  await db.schema
    .createIndex('sessions_public_completed_idx')
    .on('sessions')
    .columns(['org_id', 'starts_at', 'id', 'type', 'created_by', 'search_name', 'is_recurring', 'row_version'])
    .where(sql.ref('is_public'), '=', 1)
    .where(sql.ref('status'), '=', 'completed')
    .execute();
}
