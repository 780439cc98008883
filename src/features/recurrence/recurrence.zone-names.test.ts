import { expect, it } from 'vitest';
import { canonicalTimeZone, isValidTimeZone } from './recurrence.time.js';
import { ZONE_NAMES_ICU_RENAMES } from './recurrence.zone-names.js';

it('gives each name the runtime reads as another one back in its IANA spelling, whatever the case it was sent in', () => {
  const known = ZONE_NAMES_ICU_RENAMES.filter((name) => isValidTimeZone(name));
  // Node 20's ICU knows them all; a later runtime may drop an old link.
  expect(known.length).toBeGreaterThan(ZONE_NAMES_ICU_RENAMES.length * 0.9);
  for (const name of known) {
    expect(canonicalTimeZone(name.toLowerCase()), name).toBe(name);
    expect(canonicalTimeZone(name.toUpperCase()), name).toBe(name);
    expect(canonicalTimeZone(name), name).toBe(name);
  }
});
