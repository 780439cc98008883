/*
 * Compile-time facts about the typed client (clients/typescript), checked by tsc in
 * test/client/typed-client.test.ts and by `npm run typecheck`: each `@ts-expect-error`
 * line must be an error, so a looser generated type fails the build. Never run.
 */
import { type Problem, type Session, type SessionUpdate, type Task, type TaskCreate, type TaskUpdate, createFocusClient } from '../../clients/typescript/index.js';

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const holds = <T extends true>(): T => true as T;

// Response enums are kept.
holds<Equals<NonNullable<Session['website_blocker']>['mode'], 'preset' | 'custom'>>();
holds<Equals<Session['occurrence'], 'daily' | 'weekly' | 'monthly' | null>>();
holds<Equals<Session['recurring_month_week_pos'], 1 | 2 | 3 | 4 | -1 | null>>();
holds<Equals<Session['status'], 'waiting' | 'in_progress' | 'completed'>>();
holds<Equals<NonNullable<Session['participation']>['role'], 'host' | 'collaborator' | 'participant' | null>>();
// An origin's id is an integer or a string; read-only fields are answered as their type.
holds<Equals<Task['source_id'], number | string | null>>();
holds<Equals<Task['owner'], string>>();
holds<Equals<Session['created_by'], string>>();
// Read-only fields are not part of what is sent.
holds<Equals<Extract<keyof TaskCreate, 'owner' | 'id' | 'created_at'>, never>>();

export async function typeChecks(): Promise<void> {
  const focus = createFocusClient('http://127.0.0.1:1', 'fst_not_a_token');
  const session = { org_id: 1, name: 'Focus', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' } as const;

  // Fields with a default stay optional in a request.
  await focus.POST('/api/v1/sessions', { body: session });
  // Read-only fields are not part of a request body's type (excess properties of a typed literal).
  // @ts-expect-error `owner` is read-only: never sent
  const withOwner: TaskCreate = { context: 'x', session_id: 1, owner: 42 };
  // @ts-expect-error `id` is read-only: never sent
  const withId: TaskUpdate = { is_completed: true, id: '7' };
  // @ts-expect-error `created_by` is read-only: never sent
  const withCreator: SessionUpdate = { name: 'x', created_by: 'mallory' };
  void [withOwner, withId, withCreator];
  // @ts-expect-error a session type outside the enum
  await focus.POST('/api/v1/sessions', { body: { ...session, type: 'meeting' } });
  // @ts-expect-error a query parameter GET /tasks does not take
  await focus.GET('/api/v1/tasks', { params: { query: { owner: 'bob' } } });

  // Errors are typed problem+json.
  const missing = await focus.GET('/api/v1/tasks/{id}', { params: { path: { id: 1 } } });
  if (missing.error !== undefined) {
    holds<Equals<typeof missing.error, Problem>>();
    holds<Equals<typeof missing.error.errors, { path: string; message: string }[] | undefined>>();
  } else {
    holds<Equals<typeof missing.data.data, Task>>();
  }
}
