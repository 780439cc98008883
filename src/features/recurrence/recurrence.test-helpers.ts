import type { RecurrencePattern } from './recurrence.engine.js';

/** The neutral parts of a pattern; tests set what they are about. */
export const NEUTRAL: Omit<RecurrencePattern, 'start' | 'occurrence'> = {
  ends: null,
  recurringDays: [],
  monthOption: null,
  weekPos: null,
  weekDay: null,
  fallback: 0,
};

export function pattern(overrides: Partial<RecurrencePattern> & Pick<RecurrencePattern, 'start' | 'occurrence'>): RecurrencePattern {
  return { ...NEUTRAL, ...overrides };
}
