import { foldForSearch, toJson } from '../../src/storage/columns.js';
import type { NewSession } from '../../src/storage/tables.js';

const now = '2026-01-01T00:00:00.000Z';

/** A stored one-off session row in org 1 for storage-level tests; override what the test is about. */
export function sessionRow(name: string, createdBy: number, overrides: Partial<NewSession> = {}): NewSession {
  return {
    org_id: 1, created_by: createdBy, name, type: 'standard', duration: 25, schedule: '2026-01-02', time_minutes: 540,
    timezone: 'UTC', starts_at: '2026-01-02T09:00:00.000Z', ends_at: '2026-01-02T09:25:00.000Z', is_public: 1,
    status: 'waiting', website_blocker_enabled: 0, website_blocker: null, snooze_enabled: 0, snooze_apps: toJson({}),
    is_recurring: 0, recurring_start: null, recurring_ends: null, occurrence: null, recurring_days: toJson([]),
    recurring_month_option: null, recurring_month_week_pos: null, recurring_month_week_day: null, fallback_option: 0,
    created_at: now, updated_at: now, rrule: null, search_name: foldForSearch(String(overrides.name ?? name)),
    ...overrides,
  };
}
