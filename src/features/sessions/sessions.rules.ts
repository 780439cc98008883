import { STATUSES, type Status } from '../../domain/vocabulary.js';
import type { Db } from '../../storage/database.js';
import { jsonBytes } from '../../toolkit/api.js';
import { type FieldError, FieldErrors, conflict, forbidden } from '../../toolkit/errors.js';
import { isFlagged } from '../../toolkit/validation.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { membersByHandle } from '../auth/auth.principals.js';
import { compareDates } from '../recurrence/recurrence.dates.js';
import { nextOccurrenceOnOrAfter } from '../recurrence/recurrence.engine.js';
import { NOT_A_TIME_ZONE, isValidTimeZone } from '../recurrence/recurrence.time.js';
import type { SessionsContext } from './sessions.context.js';
import { DAY_FIELDS, type RecurrenceFields, type SessionModel, patternOf } from './sessions.model.js';
import { MAX_SNOOZE_APPS_BYTES, MAX_WEBSITE_BLOCKER_BYTES } from './sessions.blocker-schema.js';

/*
 * The rules the JSON schema cannot state: they span fields, need the stored session
 * (update validates the merged record) or need the database (collaborators). They run
 * even when the schema already failed, on the fields that passed it, so that one 422
 * lists every bad field; a rule whose inputs were rejected by the schema is skipped.
 */

/**
 * Why a series has no occurrence at all, or undefined when it has one (or is no series).
 * In practice only a bounded range can be empty (dates end at 9998, removed occurrences
 * are few), so the fault is `recurring_ends`. Finding the first occurrence is enough.
 */
function emptySeries(m: Partial<SessionModel>, exceptions: ReadonlySet<string> | undefined): string | undefined {
  if (m.schedule === undefined) return undefined;
  const fields = m as RecurrenceFields;
  const pattern = patternOf(fields, exceptions);
  if (pattern === null || nextOccurrenceOnOrAfter(pattern, pattern.start) !== null) return undefined;
  const range = `between its start (${pattern.start}) and recurring_ends (${pattern.ends ?? 'none'})`;
  const bare = patternOf(fields);
  return exceptions !== undefined && bare !== null && nextOccurrenceOnOrAfter(bare, bare.start) !== null
    ? `every occurrence of the series ${range} is a removed occurrence`
    : `the series has no occurrence ${range}`;
}

/**
 * Checks `candidate` (a full session, or the parts of one that passed the schema) and
 * throws 422 with `schemaErrors` plus every broken rule, or 403 for an org the user is
 * not in. `exceptions`: a stored series' removed occurrences. Returns the collaborators'
 * user ids.
 */
export async function checkSessionRules(
  ctx: SessionsContext,
  db: Db,
  user: AuthenticatedUser,
  candidate: Partial<SessionModel>,
  schemaErrors: readonly FieldError[] = [],
  exceptions?: ReadonlySet<string>,
): Promise<number[]> {
  const flagged = (field: string) => isFlagged(schemaErrors, field);
  const orgId = flagged('org_id') ? undefined : candidate.org_id;
  const inOrg = orgId !== undefined && user.orgIds.includes(orgId);

  const errors = new FieldErrors();
  for (const e of schemaErrors) errors.add(e.path, e.message);
  if (!flagged('timezone') && candidate.timezone !== undefined && !isValidTimeZone(candidate.timezone)) {
    errors.add('/timezone', NOT_A_TIME_ZONE);
  }
  if (!flagged('is_recurring') && !flagged('occurrence') && candidate.is_recurring === 1 && (candidate.occurrence ?? null) === null) {
    errors.add('/occurrence', 'is required when is_recurring is 1');
  }
  if (!flagged('recurring_ends') && !flagged('recurring_start') && !flagged('schedule') && (candidate.recurring_ends ?? null) !== null) {
    const start = candidate.recurring_start ?? candidate.schedule;
    if (start !== undefined && compareDates(candidate.recurring_ends as string, start) < 0) {
      errors.add('/recurring_ends', `must be on or after the recurrence start (${start})`);
    }
  }
  const empty = isFlagged(errors.list, 'recurring_ends') || DAY_FIELDS.some(flagged) ? undefined : emptySeries(candidate, exceptions);
  if (empty !== undefined) errors.add('/recurring_ends', empty);
  for (const [field, limit] of [['website_blocker', MAX_WEBSITE_BLOCKER_BYTES], ['snooze_apps', MAX_SNOOZE_APPS_BYTES]] as const) {
    const size = flagged(field) || candidate[field] == null ? 0 : jsonBytes(candidate[field]);
    if (size > limit) errors.add(`/${field}`, `takes ${size} bytes as JSON; at most ${limit}`);
  }
  // 403 is about who may act; a request that breaks field rules as well gets its 422 first
  // (collaborators are checked against the org, so only once the org is the caller's).
  if (orgId !== undefined && !inOrg) {
    errors.throwIfAny();
    throw forbidden('You can only place sessions in an organization you belong to.');
  }
  let collaboratorIds: number[] = [];
  const collaborators = candidate.collaborator ?? [];
  if (inOrg && !flagged('collaborator') && collaborators.length > 0) {
    const members = await membersByHandle(db, { orgId, handles: collaborators });
    collaborators.forEach((handle, i) => {
      if (!members.has(handle)) errors.add(`/collaborator/${i}`, `${handle} is not a member of org ${orgId}`);
    });
    collaboratorIds = [...new Set(collaborators.map((h) => members.get(h) ?? 0))];
  }
  errors.throwIfAny();
  return collaboratorIds;
}

const statusRank = (s: Status) => STATUSES.indexOf(s);

/** Status only moves forward (skipping is fine); a move backward is a state conflict. */
export function assertStatusForward(current: Status, next: Status): void {
  if (statusRank(next) < statusRank(current)) {
    throw conflict(`Status moves only forward; it is ${current} and cannot become ${next}.`);
  }
}
