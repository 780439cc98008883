import { parseJson } from '../../storage/columns.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { principalsOf } from '../auth/auth.principals.js';
import { type PositionedChange, createChangesRepository, sawBefore } from '../../changelog/changelog.repository.js';
import type { RecordRequest, Session, SessionsApi } from '../sessions/sessions.api.js';
import type { Task } from '../tasks/tasks.schema.js';
import { type TasksService, createTasksService } from '../tasks/tasks.service.js';
import type { WebhookEvent } from './webhooks.events.js';
import { createOutbox } from './webhooks.outbox.js';
import { type EventData, type OutgoingEvent, bodyOf } from './webhooks.payload.js';
import type { ParticipationData } from './webhooks.payloads.js';
import { createWebhooksRepository } from './webhooks.repository.js';

/** Changes fanned out per step: bounded, so a step never holds the write lock long. */
export const FANOUT_BATCH = 500;
/** The fan-out hands the event loop back this often: requests never wait long behind many subscribers. */
const YIELD_EVERY_MS = 10;

type Hook = { id: number; events: Set<string>; user: AuthenticatedUser };
type SessionRecord = Session;
type Repository = ReturnType<typeof createWebhooksRepository>;
/** The features a step reads records through: never their tables. */
type Readers = { sessions: SessionsApi; tasks: TasksService };

/** What a step's changes are told as: the records as each subscriber sees them now, read once per step. */
interface StepView {
  /** The tasks the changes name, by owner (of the hooks' users) and id, as their owner reads them. */
  tasks: Map<number, Map<number, Task>>;
  existing: Awaited<ReturnType<SessionsApi['existing']>>;
  handles: Map<number, string>;
  sessionAs: (user: AuthenticatedUser, id: number, date?: string) => Promise<SessionRecord | undefined>;
}

/** What a webhook is told of a change; `shared`: what the body is built of when it may be shared (the record shown, and what a participation adds to it). */
interface HookEvent {
  type: WebhookEvent;
  data: { id: string | number } | ParticipationData;
  shared?: { shown: object; extra: string };
}

/**
 * Who did it is told only to the session's creator and collaborators, and to the actor:
 * no endpoint lists who joined a session (others see participants_count), so neither does
 * a webhook. `record`: the session as the subscriber sees it now (its collaborators), if
 * it does.
 */
const actorShownTo = (user: AuthenticatedUser, change: PositionedChange, record: SessionRecord | undefined) =>
  user.id === change.actor_id || user.id === change.owner_id || (record?.collaborator.includes(user.handle) ?? false);

/** The occurrences participation changes and occurrence edits name, for each subscriber who may be told of the change (deliveriesFor's first test). */
function dayRequests(changes: readonly PositionedChange[], users: readonly AuthenticatedUser[]): RecordRequest[] {
  const out = new Map<string, RecordRequest>();
  for (const c of changes) {
    if (c.kind !== 'session' || (c.action !== 'participation' && c.action !== 'updated') || c.occurrence_date === null) continue;
    for (const reader of users) {
      if (sawBefore(reader, c) || (c.org_id !== null && reader.orgIds.includes(c.org_id))) out.set(`${reader.id}:${c.record_id}:${c.occurrence_date}`, { reader, id: c.record_id, date: c.occurrence_date });
    }
  }
  return [...out.values()];
}

/**
 * Turns change-log rows into deliveries: for every webhook of a user who may see the
 * change (the change feed's visibility: the session visible now, or before the change
 * through its audience; a task of the user), one delivery whose data is the record as the
 * user sees it now, or `{id}` when it is gone from the user's sight (`session.deleted`:
 * deleted, or no longer visible). A `session.participation` tells what was done
 * (webhooks.payloads.ts ParticipationData). The deliveries and the new position commit together,
 * with the position row locked: a change is fanned out exactly once, whichever instance
 * runs the step. Built once per storage.
 */
export function createFanout(storage: Storage, sessions: SessionsApi, queued: () => void = () => {}) {
  const repo = createWebhooksRepository(storage);
  const outbox = createOutbox(storage);
  const log = createChangesRepository(storage);
  const tasks = createTasksService(storage);

  return {
    /** One bounded step; returns how many changes it passed (0: none new). */
    async step(): Promise<number> {
      const state = await repo.readState(storage.db, 'fanout');
      const from = Number(state?.position ?? 0);
      const changes = await log.allAfter({ after: from, limit: FANOUT_BATCH });
      const last = changes.at(-1);
      if (last === undefined) return 0;
      // Computed before the transaction: reading records inside it would hold the lock (and on SQLite, the one connection).
      const events = await deliveriesFor(storage, { sessions, tasks }, repo, changes);
      const enqueued = await storage.transaction(async (trx) => {
        const locked = await repo.lockState(trx, 'fanout');
        // Another instance passed these changes meanwhile: its deliveries stand, these are dropped.
        if (Number(locked?.position ?? 0) !== from) return false;
        await outbox.enqueue(trx, events, new Date().toISOString());
        await repo.writeState(trx, 'fanout', { position: last.position });
        return events.length > 0;
      });
      // Committed: a resting dispatcher may look now.
      if (enqueued) queued();
      return changes.length;
    },
  };
}

/** A step's deliveries (see createFanout). */
async function deliveriesFor(storage: Storage, readers: Readers, repo: Repository, changes: readonly PositionedChange[]): Promise<OutgoingEvent[]> {
  const hooks = await subscribedHooks(storage, repo, changes);
  if (hooks === undefined) return [];
  const view = await stepView(storage, readers, changes, hooks);
  const bodyFor = sharedBodies();
  let lastYield = performance.now();

  const out: OutgoingEvent[] = [];
  // A session moved between orgs is logged once per org: one event per webhook still.
  const sent = new Set<string>();
  for (const change of changes) {
    for (const hook of hooks) {
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        lastYield = performance.now();
      }
      const event = change.kind === 'task' ? taskEvent(view, change, hook) : await sessionEvent(view, change, hook);
      if (event === undefined) continue;
      const { type, data, shared } = event;
      if (!hook.events.has(type)) continue;
      const key = `${hook.id}:${change.kind}:${change.record_id}:${change.action}:${change.participation}:${change.occurrence_date}:${change.changed_at}:${change.actor_id}`;
      if (sent.has(key)) continue;
      sent.add(key);
      const body = shared === undefined ? bodyOf(type, change.changed_at, data) : bodyFor(type, change.changed_at, shared.shown, shared.extra, () => data);
      out.push({ webhookId: hook.id, type, occurredAt: change.changed_at, body });
    }
  }
  return out;
}

/** The webhooks of users who may be told of these changes, with their owners; undefined when there are none. */
async function subscribedHooks(storage: Storage, repo: Repository, changes: readonly PositionedChange[]): Promise<Hook[] | undefined> {
  const db = storage.db;
  const orgIds = [...new Set(changes.flatMap((c) => (c.kind === 'session' && c.org_id !== null ? [c.org_id] : [])))];
  const taskOwners = [...new Set(changes.flatMap((c) => (c.kind === 'task' ? [c.owner_id] : [])))];
  const userIds = await repo.subscribersAmong(db, { orgIds, userIds: taskOwners });
  const rows = await repo.hooksOf(db, userIds);
  if (rows.length === 0) return undefined;
  // A disabled user's webhooks are sent nothing (contract section 13).
  const principals = await principalsOf(db, rows.map((r) => r.user_id), { enabledOnly: true });
  return rows.flatMap((r) => {
    const user = principals.get(r.user_id);
    return user === undefined ? [] : [{ id: r.id, events: new Set(parseJson(r.events)), user }];
  });
}

/** Reads the records the changes name, as the hooks' owners see them now. */
async function stepView(storage: Storage, { sessions, tasks: taskReads }: Readers, changes: readonly PositionedChange[], hooks: readonly Hook[]): Promise<StepView> {
  const db = storage.db;
  const taskIds = [...new Set(changes.flatMap((c) => (c.kind === 'task' && c.action !== 'deleted' ? [c.record_id] : [])))];
  // A task's change is told to its owner only: of the hooks' users, the owners the changes name.
  const taskOwners = new Set(changes.flatMap((c) => (c.kind === 'task' ? [c.owner_id] : [])));
  const owners = [...new Map(hooks.filter((h) => taskOwners.has(h.user.id)).map((h) => [h.user.id, h.user])).values()];
  const records = taskIds.length === 0 ? [] : await taskReads.recordsOfOwners(owners, taskIds);
  const tasks = new Map(owners.map((owner, i) => [owner.id, records[i] ?? new Map<number, Task>()]));

  const sessionIds = [...new Set(changes.flatMap((c) => (c.kind === 'session' && c.action !== 'deleted' ? [c.record_id] : [])))];
  const existing = await sessions.existing(sessionIds);

  const actorIds = [...new Set(changes.flatMap((c) => (c.kind === 'session' && c.action === 'participation' ? [c.actor_id] : [])))];
  const handles = new Map([...(await principalsOf(db, actorIds)).values()].map((u) => [u.id, u.handle]));

  // The sessions as each subscriber sees them now, loaded once and rendered once per distinct view.
  const users = [...new Map(hooks.map((h) => [h.user.id, h.user])).values()];
  const views = sessionIds.length === 0 ? [] : await sessions.visibleRecordsForReaders(users, sessionIds);
  const viewOf = new Map(users.map((u, i) => [u.id, views[i]]));
  // An occurrence (a participation change's day), as each subscriber who may be told sees it: one batched read per step.
  const days = dayRequests(changes, users);
  const dayRecords = await sessions.recordsAsSeen(days);
  const seen = new Map(days.map((r, i) => [`${r.reader.id}:${r.id}:${r.date}`, dayRecords[i]]));
  const sessionAs = (user: AuthenticatedUser, id: number, date?: string): Promise<SessionRecord | undefined> =>
    Promise.resolve(date === undefined ? viewOf.get(user.id)?.get(id) : seen.get(`${user.id}:${id}:${date}`));
  return { tasks, existing, handles, sessionAs };
}

/** Bodies by the data object they show: subscribers who see the same record share one string (and one stored payload). */
function sharedBodies() {
  const bodies = new WeakMap<object, Map<string, string>>();
  return (type: WebhookEvent, timestamp: string, shown: object, extra: string, data: () => EventData) => {
    const mine = bodies.get(shown) ?? new Map<string, string>();
    bodies.set(shown, mine);
    const key = `${type}\u0000${timestamp}\u0000${extra}`;
    let body = mine.get(key);
    if (body === undefined) mine.set(key, (body = bodyOf(type, timestamp, data())));
    return body;
  };
}

/** A task's change, told to its owner only. */
function taskEvent(view: StepView, change: PositionedChange, hook: Hook): HookEvent | undefined {
  if (change.owner_id !== hook.user.id) return undefined;
  const type: WebhookEvent = `task.${change.action === 'participation' ? 'updated' : change.action}`;
  const task = change.action === 'deleted' ? undefined : view.tasks.get(hook.user.id)?.get(change.record_id);
  // Deleted since (or now): the id is all there is to tell.
  return { type, data: task ?? { id: String(change.record_id) } };
}

/** A session's change, told to whoever may see it (or saw it before), as they see the session now. */
async function sessionEvent(view: StepView, change: PositionedChange, hook: Hook): Promise<HookEvent | undefined> {
  const before = sawBefore(hook.user, change);
  if (change.action === 'deleted') return before ? { type: 'session.deleted', data: { id: change.record_id } } : undefined;
  if (!before && (change.org_id === null || !hook.user.orgIds.includes(change.org_id))) return undefined;
  // A participation change (or an occurrence's edit) shows its occurrence; one removed since, as `{id}` (the session is still there).
  const date = change.action === 'participation' || change.action === 'updated' ? (change.occurrence_date ?? undefined) : undefined;
  let record = date === undefined ? undefined : await view.sessionAs(hook.user, change.record_id, date);
  let shown: SessionRecord | { id: number } | undefined = record;
  if (record === undefined) {
    record = await view.sessionAs(hook.user, change.record_id);
    shown = record === undefined || date === undefined ? record : { id: change.record_id };
  }
  const told = (session: SessionRecord | { id: number }): { id: number } | ParticipationData =>
    change.action !== 'participation'
      ? session
      : {
          action: change.participation,
          occurrence_date: change.occurrence_date,
          user: actorShownTo(hook.user, change, record) ? (view.handles.get(change.actor_id) ?? null) : null,
          session,
        };
  if (shown !== undefined) {
    const message = told(shown);
    return { type: `session.${change.action}`, data: message, shared: { shown, extra: 'action' in message ? `${message.action}:${message.occurrence_date}:${message.user}` : '' } };
  }
  // Deleted since: the change itself, with the id only; its deletion follows.
  if (!view.existing.has(change.record_id) && (before || change.owner_id === hook.user.id)) return { type: `session.${change.action}`, data: told({ id: change.record_id }) };
  return before ? { type: 'session.deleted', data: { id: change.record_id } } : undefined;
}
