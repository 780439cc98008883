import type { Db } from '../../storage/database.js';

/** Owners per statement: a large org stays within a statement's parameters. */
const OWNERS_PER_READ = 500;

export interface TaskCompletion {
  ownerId: number;
  /** ISO instant. */
  completedAt: string;
}

/**
 * When the given users' tasks were completed, in [from, to) (ISO instants): what focus
 * statistics count. Read through the partial index on (owner_id, completed_at), one
 * statement per OWNERS_PER_READ owners.
 */
export async function taskCompletions(db: Db, q: { ownerIds: readonly number[]; from: string; to: string }): Promise<TaskCompletion[]> {
  const ownerIds = [...new Set(q.ownerIds)];
  const reads = [];
  for (let i = 0; i < ownerIds.length; i += OWNERS_PER_READ) {
    reads.push(
      db
        .selectFrom('tasks')
        .select(['owner_id', 'completed_at'])
        .where('owner_id', 'in', ownerIds.slice(i, i + OWNERS_PER_READ))
        .where('completed_at', 'is not', null)
        .where('completed_at', '>=', q.from)
        .where('completed_at', '<', q.to)
        .execute(),
    );
  }
  return (await Promise.all(reads)).flat().map((r) => ({ ownerId: r.owner_id, completedAt: r.completed_at as string }));
}
