import { expect } from 'vitest';
import type { Client, Response } from '../../../test/helpers/harness.js';

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

/** Creates a session and returns its record; fails the test unless the answer is 201. */
export async function createSession(client: Client, overrides: Record<string, unknown> = {}): Promise<SessionRecord> {
  const res = await client.post<{ data: SessionRecord }>('/api/v1/sessions', sessionBody(overrides));
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The paths of a 422 problem's errors, sorted. */
export function errorPaths(res: Response<{ errors?: { path: string }[] }>): string[] {
  expect(res.status, res.text).toBe(422);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  return (res.body.errors ?? []).map((e) => e.path).sort();
}

/** Every page of a listing, following next_cursor; also checks the page size. */
export async function listAll(client: Client, query: string, limit: number): Promise<SessionRecord[]> {
  const out: SessionRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const url = `/api/v1/sessions?${query}${query === '' ? '' : '&'}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const res: Response<{ data: SessionRecord[]; next_cursor: string | null }> = await client.get(url);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
    if (cursor === null) return out;
    expect(res.body.data.length).toBe(limit);
  }
  throw new Error('paging did not end');
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
