import type { Db } from '../../storage/database.js';
import { principalsOf } from '../auth/auth.principals.js';

/** The org a delivery's body speaks of: a session record's, or the session's of a participation; undefined for tasks and bare ids. */
function orgOfPayload(payload: string): number | undefined {
  try {
    const data = (JSON.parse(payload) as { data?: { org_id?: unknown; session?: { org_id?: unknown } } }).data;
    const org = data?.org_id ?? data?.session?.org_id;
    return typeof org === 'number' ? org : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Off-boarding at the last moment (contract section 13): of deliveries about to be sent,
 * those whose webhook's owner is disabled, or whose body shows a session of an org the
 * owner is no longer a member of. Checked when a delivery is claimed, so queued ones and
 * retries stop too, whenever they were enqueued. A body without an org (a task, a bare
 * `{id}`) only needs its owner enabled.
 */
export async function withheldDeliveries(db: Db, claimed: readonly { id: number; user_id: number; payload: string }[]): Promise<Set<number>> {
  const withheld = new Set<number>();
  if (claimed.length === 0) return withheld;
  // Owners enabled now, with their memberships now; a disabled (or deleted) owner is missing.
  const owners = await principalsOf(db, claimed.map((d) => d.user_id), { enabledOnly: true });
  for (const d of claimed) {
    const owner = owners.get(d.user_id);
    const org = orgOfPayload(d.payload);
    if (owner === undefined || (org !== undefined && !owner.orgIds.includes(org))) withheld.add(d.id);
  }
  return withheld;
}
