import { expect } from 'vitest';
import { type Client, listAll } from '../../../test/helpers/harness.js';
import { createSession } from '../sessions/sessions.test-helpers.js';

export interface TaskRecord {
  id: string;
  context: string;
  is_completed: boolean;
  owner: string;
  source: string | null;
  source_id: number | null;
  session_id: number | null;
  created_at: string;
  updated_at: string;
}

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Creates a session in `orgId` through the API and returns its id. */
export async function newSession(client: Client, orgId: number, overrides: Record<string, unknown> = {}): Promise<number> {
  return (await createSession(client, { org_id: orgId, ...overrides })).id;
}

export async function newTask(client: Client, body: Record<string, unknown>): Promise<TaskRecord> {
  const res = await client.post('/api/v1/tasks', body);
  expect(res.status, res.text).toBe(201);
  return (res.body as { data: TaskRecord }).data;
}

/** Asserts the exact task record shape of CONTRACT §4. */
export function expectTaskShape(task: TaskRecord): void {
  expect(Object.keys(task).sort()).toEqual(
    ['context', 'created_at', 'id', 'is_completed', 'owner', 'session_id', 'source', 'source_id', 'updated_at'],
  );
  expect(task.id).toMatch(/^[1-9][0-9]*$/);
  expect(typeof task.context).toBe('string');
  expect(typeof task.is_completed).toBe('boolean');
  expect(task.created_at).toMatch(ISO_Z);
  expect(task.updated_at).toMatch(ISO_Z);
  expect(new Date(task.created_at).toISOString()).toBe(task.created_at);
}

/** Every page of GET /tasks with the given query (see listAll). */
export function listAllTasks(client: Client, query: string, limit: number): Promise<TaskRecord[]> {
  return listAll<TaskRecord>(client, '/api/v1/tasks', query, limit);
}

/** Response bodies of the task endpoints, for typed access in tests. */
export interface One {
  data: TaskRecord;
}
export interface Page {
  data: TaskRecord[];
  next_cursor: string | null;
}
export interface BulkResponse {
  data: TaskRecord[];
  meta: { created: number; updated: number };
}
