import { expect } from 'vitest';
import { type Client, listAll } from '../../../test/helpers/harness.js';

/** A valid create body; override any field. */
export function sessionBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    org_id: 1,
    name: 'Deep work',
    type: 'standard',
    duration: 60,
    schedule: '2026-03-10',
    time: '9:00 AM',
    ...overrides,
  };
}

/** `HH:mm` of an instant in UTC: the 24-hour `time` of a session in UTC that starts then. */
export const utcTime = (at: Date): string => at.toISOString().slice(11, 16);

/** A create body for a one-off session in UTC starting at `at` (whole minutes); override any field. */
export const sessionAt = (at: Date, overrides: Record<string, unknown> = {}): Record<string, unknown> =>
  sessionBody({ schedule: at.toISOString().slice(0, 10), time: utcTime(at), timezone: 'UTC', ...overrides });

/** Creates a session and returns its record; fails the test unless the answer is 201. */
export async function createSession(client: Client, overrides: Record<string, unknown> = {}): Promise<SessionRecord> {
  const res = await client.post<{ data: SessionRecord }>('/api/v1/sessions', sessionBody(overrides));
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Every page of GET /sessions with the given query (see listAll). */
export function listAllSessions(client: Client, query: string, limit: number): Promise<SessionRecord[]> {
  return listAll<SessionRecord>(client, '/api/v1/sessions', query, limit);
}

export interface SessionRecord {
  id: number;
  name: string;
  status: string;
  is_public: boolean;
  schedule: string;
  time: string;
  starts_at: string;
  ends_at: string;
  occurrence_date?: string;
  participants_count: number;
  collaborator: string[];
  created_by: string;
  created_at: string;
  updated_at: string;
  participation?: { joined: boolean; role: string | null; joined_at: string | null; completed_at: string | null };
  [key: string]: unknown;
}
/** The trigram name lookup, for the migration test that checks the search table a migration builds. */
export { sessionIdsNamed } from './sessions.name-search.js';
